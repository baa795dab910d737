package main

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
)

// freshPlan is movePlan as raild answers the ADD that made its leases.
func freshPlan(names ...string) *api.Plan {
	plan := movePlan(names...)
	plan.Fresh = true
	return plan
}

// failingWriter is a stdout the result cannot be written to.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) {
	return 0, errors.New("write /dev/stdout: broken pipe")
}

func TestAdd(t *testing.T) {
	fifo := fifoPath(t)
	annotated := map[string]any{"runtimeConfig": map[string]any{netconf.AnnotationsCapability: map[string]string{api.AnnotationAttach: "true"}}}
	optOut := map[string]any{"runtimeConfig": map[string]any{netconf.AnnotationsCapability: map[string]string{api.AnnotationAttach: "false"}}}
	passThroughDown := map[string]any{"onRaildDown": "pass-through"}
	badAddress := freshPlan("rail0", "rail1")
	badAddress.Interfaces[1].Addresses[0].CIDR = "10.77.0.300/24"
	tests := []struct {
		name       string
		netns      string
		conf       []byte
		raild      fakeRaild
		attached   []string // interfaces the pod already has, as rail left them
		changed    []string // interfaces the pod has, changed since rail left them
		failAttach int
		undoFails  bool
		failDetach bool
		failWrite  bool
		wantCode   uint   // 0: success
		wantErr    string // in the error's details
		wantOut    string // in the printed result
		wantLinks  string
		wantRaild  string // raild's calls, with the pod lock taken and dropped
		wantLog    string
		wantLeft   string // the pod's interfaces afterwards, sorted, joined by ","
	}{
		{name: "two NICs attached", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"), raild: fakeRaild{plan: freshPlan("rail0", "rail1")},
			wantOut: `"name": "rail1"`, wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move", wantRaild: "lock,allocate,unlock",
			wantLeft: "rail0,rail1"},
		{name: "0.3.1 chain gets a 0.3.1 result", netns: "/ns/pod", conf: netconfJSON("0.3.1", nil, "eth0"), raild: fakeRaild{plan: freshPlan("rail0")},
			wantOut: `"cniVersion": "0.3.1"`, wantLinks: "attach /ns/pod rail0 move", wantRaild: "lock,allocate,unlock", wantLeft: "rail0"},
		{name: "pass-through plan: the previous result as is", netns: "/ns/pod", conf: netconfJSON("0.3.1", nil, "eth0"),
			raild: fakeRaild{plan: &api.Plan{PassThrough: true, Reason: "no GPUs"}}, wantOut: `"10.1.0.5/24"`, wantRaild: "lock,allocate,unlock"},
		{name: "opt-out never asks raild", netns: "/ns/pod", conf: netconfJSON("1.0.0", optOut, "eth0"), wantOut: `"eth0"`},
		{name: "raild down, default: try again", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{allocErr: unreachable()}, wantCode: api.CodeTryAgainLater, wantRaild: "lock,allocate,unlock"},
		{name: "raild down, pass-through: starts without RDMA, logged", netns: "/ns/pod", conf: netconfJSON("1.1.0", passThroughDown, "eth0"),
			raild: fakeRaild{allocErr: unreachable()}, wantOut: `"eth0"`, wantRaild: "lock,allocate,unlock", wantLog: "starts without RDMA"},
		{name: "raild down, pass-through, but the pod asked: try again", netns: "/ns/pod",
			conf:  netconfJSON("1.1.0", merge(passThroughDown, annotated), "eth0"),
			raild: fakeRaild{allocErr: unreachable()}, wantCode: api.CodeTryAgainLater, wantRaild: "lock,allocate,unlock"},
		{name: "raild answers 11 (kubelet down): no pass-through", netns: "/ns/pod", conf: netconfJSON("1.1.0", passThroughDown, "eth0"),
			raild: fakeRaild{allocErr: &api.Error{Code: api.CodeTryAgainLater, Msg: "cannot ask the kubelet"}}, wantCode: api.CodeTryAgainLater,
			wantRaild: "lock,allocate,unlock"},
		{name: "own netns refused before anything", netns: "/ns/host", conf: netconfJSON("1.1.0", nil, "eth0"), raild: fakeRaild{plan: freshPlan("rail0")},
			wantCode: types.ErrInvalidEnvironmentVariables},
		{name: "empty netns refused", netns: "", conf: netconfJSON("1.1.0", nil, "eth0"), wantCode: types.ErrInvalidEnvironmentVariables},
		{name: "a FIFO as netns refused before anything, never opened", netns: fifo, conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{plan: freshPlan("rail0")}, wantCode: types.ErrInvalidNetNS},
		{name: "second attach fails: pkg/attach undid the first, the fresh lease is released", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{plan: freshPlan("rail0", "rail1")}, failAttach: 2, wantCode: types.ErrInternal,
			wantErr: "device busy", wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move", wantRaild: "lock,allocate,release,unlock"},
		{name: "second attach fails and the undo of the first fails too: the fresh lease stays for DEL", netns: "/ns/pod",
			conf: netconfJSON("1.1.0", nil, "eth0"), raild: fakeRaild{plan: freshPlan("rail0", "rail1")}, failAttach: 2, undoFails: true,
			wantCode: types.ErrInternal, wantErr: "undo incomplete: undo interface /ns/pod/rail0",
			wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move", wantRaild: "lock,allocate,unlock", wantLeft: "rail0"},
		{name: "repeated ADD, second attach fails: the lease is the first ADD's and stays", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{plan: movePlan("rail0", "rail1")}, failAttach: 2, wantCode: types.ErrInternal,
			wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move", wantRaild: "lock,allocate,unlock"},
		{name: "repeated ADD finds rail0 changed: fails, the pod keeps rail0 and its lease", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{plan: movePlan("rail0")}, attached: []string{"rail0"}, changed: []string{"rail0"}, wantCode: types.ErrInternal,
			wantErr: "not as requested", wantLinks: "attach /ns/pod rail0 move", wantRaild: "lock,allocate,unlock", wantLeft: "rail0"},
		{name: "repeated ADD finds everything attached: the same result, nothing made", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{plan: movePlan("rail0", "rail1")}, attached: []string{"rail0", "rail1"}, wantOut: `"10.77.0.3/24"`,
			wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move", wantRaild: "lock,allocate,unlock", wantLeft: "rail0,rail1"},
		{name: "result not written: what this ADD made is undone, the fresh lease released", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{plan: freshPlan("rail0", "rail1")}, failWrite: true, wantCode: types.ErrInternal, wantErr: "broken pipe",
			wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move;detach /ns/pod rail1 move;detach /ns/pod rail0 move",
			wantRaild: "lock,allocate,release,unlock"},
		{name: "result not written on a repeated ADD: only the interface it made is undone, the lease stays", netns: "/ns/pod",
			conf: netconfJSON("1.1.0", nil, "eth0"), raild: fakeRaild{plan: movePlan("rail0", "rail1")}, attached: []string{"rail0"}, failWrite: true,
			wantCode: types.ErrInternal, wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move;detach /ns/pod rail1 move",
			wantRaild: "lock,allocate,unlock", wantLeft: "rail0"},
		{name: "rollback cannot release: reported with the error", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{plan: freshPlan("rail0", "rail1"), relErr: &api.Error{Code: api.CodeIO, Msg: "lease store"}}, failAttach: 2,
			wantCode: types.ErrInternal, wantErr: "device busy; rollback: release the leases: lease store",
			wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move", wantRaild: "lock,allocate,release,unlock"},
		{name: "rollback cannot detach: reported, and the lease stays with the address still on the pod", netns: "/ns/pod",
			conf: netconfJSON("1.1.0", nil, "eth0"), raild: fakeRaild{plan: freshPlan("rail0")}, failWrite: true, failDetach: true,
			wantCode: types.ErrInternal, wantErr: "rollback: netlink: operation not permitted",
			wantLinks: "attach /ns/pod rail0 move;detach /ns/pod rail0 move", wantRaild: "lock,allocate,unlock", wantLeft: "rail0"},
		{name: "bad planned address: nothing attached, the fresh lease released", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{plan: badAddress}, wantCode: types.ErrInternal, wantErr: "rail1", wantRaild: "lock,allocate,release,unlock"},
		{name: "two rail networks, one prefix: config error", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			raild: fakeRaild{plan: freshPlan("rail0")}, wantCode: types.ErrInvalidNetworkConfig, wantRaild: "lock,allocate,release,unlock"},
		{name: "bad attach annotation", netns: "/ns/pod", wantCode: types.ErrInvalidNetworkConfig,
			conf: netconfJSON("1.1.0", map[string]any{"runtimeConfig": map[string]any{netconf.AnnotationsCapability: map[string]string{api.AnnotationAttach: "maybe"}}}, "eth0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := &fakeLinks{failAttach: tt.failAttach, undoFails: tt.undoFails, failDetach: tt.failDetach, attached: map[string]bool{}, changed: map[string]bool{}}
			for _, name := range tt.attached {
				links.attached["/ns/pod/"+name] = true
			}
			for _, name := range tt.changed {
				links.changed["/ns/pod/"+name] = true
			}
			raild := tt.raild
			p, out, logs := testPlugin(&raild, links)
			if tt.failWrite {
				p.stdout = failingWriter{}
			}
			err := p.add(&skel.CmdArgs{ContainerID: "c1", Netns: tt.netns, IfName: "eth0", StdinData: tt.conf})
			if codeOf(err) != tt.wantCode || (tt.wantCode != 0) != (err != nil) {
				t.Fatalf("add = %v, want code %d", err, tt.wantCode)
			}
			if err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("add = %v, want it to contain %q", err, tt.wantErr)
			}
			if tt.wantCode == 0 && !json.Valid(out.Bytes()) || !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("result = %s, want it to contain %s", out, tt.wantOut)
			}
			if tt.wantCode != 0 && out.Len() > 0 {
				t.Errorf("a failed ADD printed %s", out)
			}
			if got := strings.Join(links.log, ";"); got != tt.wantLinks {
				t.Errorf("netlink calls = %q, want %q", got, tt.wantLinks)
			}
			if got := raild.called(); got != tt.wantRaild {
				t.Errorf("raild calls = %q, want %q", got, tt.wantRaild)
			}
			if got := strings.Join(*logs, "\n"); !strings.Contains(got, tt.wantLog) || (tt.wantLog == "" && got != "") {
				t.Errorf("log = %q, want %q", got, tt.wantLog)
			}
			var left []string
			for key := range links.attached {
				left = append(left, strings.TrimPrefix(key, "/ns/pod/"))
			}
			slices.Sort(left)
			if got := strings.Join(left, ","); got != tt.wantLeft {
				t.Errorf("the pod has %q afterwards, want %q", got, tt.wantLeft)
			}
		})
	}
}

func merge(maps ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
