package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
)

func TestAdd(t *testing.T) {
	annotated := map[string]any{"runtimeConfig": map[string]any{netconf.AnnotationsCapability: map[string]string{api.AnnotationAttach: "true"}}}
	optOut := map[string]any{"runtimeConfig": map[string]any{netconf.AnnotationsCapability: map[string]string{api.AnnotationAttach: "false"}}}
	passThroughDown := map[string]any{"onRaildDown": "pass-through"}
	tests := []struct {
		name       string
		netns      string
		conf       []byte
		raild      fakeRaild
		failAttach int
		wantCode   uint   // 0: success
		wantOut    string // in the printed result
		wantLinks  string
		wantRaild  string
		wantLog    string
	}{
		{name: "two NICs attached", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"), raild: fakeRaild{plan: movePlan("rail0", "rail1")},
			wantOut: `"name": "rail1"`, wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move", wantRaild: "allocate"},
		{name: "0.3.1 chain gets a 0.3.1 result", netns: "/ns/pod", conf: netconfJSON("0.3.1", nil, "eth0"), raild: fakeRaild{plan: movePlan("rail0")},
			wantOut: `"cniVersion": "0.3.1"`, wantLinks: "attach /ns/pod rail0 move", wantRaild: "allocate"},
		{name: "pass-through plan: the previous result as is", netns: "/ns/pod", conf: netconfJSON("0.3.1", nil, "eth0"),
			raild: fakeRaild{plan: &api.Plan{PassThrough: true, Reason: "no GPUs"}}, wantOut: `"10.1.0.5/24"`, wantRaild: "allocate"},
		{name: "opt-out never asks raild", netns: "/ns/pod", conf: netconfJSON("1.0.0", optOut, "eth0"), wantOut: `"eth0"`},
		{name: "raild down, default: try again", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{allocErr: unreachable()}, wantCode: api.CodeTryAgainLater, wantRaild: "allocate"},
		{name: "raild down, pass-through: starts without RDMA, logged", netns: "/ns/pod", conf: netconfJSON("1.1.0", passThroughDown, "eth0"),
			raild: fakeRaild{allocErr: unreachable()}, wantOut: `"eth0"`, wantRaild: "allocate", wantLog: "starts without RDMA"},
		{name: "raild down, pass-through, but the pod asked: try again", netns: "/ns/pod",
			conf:  netconfJSON("1.1.0", merge(passThroughDown, annotated), "eth0"),
			raild: fakeRaild{allocErr: unreachable()}, wantCode: api.CodeTryAgainLater, wantRaild: "allocate"},
		{name: "raild answers 11 (kubelet down): no pass-through", netns: "/ns/pod", conf: netconfJSON("1.1.0", passThroughDown, "eth0"),
			raild: fakeRaild{allocErr: &api.Error{Code: api.CodeTryAgainLater, Msg: "cannot ask the kubelet"}}, wantCode: api.CodeTryAgainLater, wantRaild: "allocate"},
		{name: "own netns refused before anything", netns: "/ns/host", conf: netconfJSON("1.1.0", nil, "eth0"), raild: fakeRaild{plan: movePlan("rail0")},
			wantCode: types.ErrInvalidEnvironmentVariables},
		{name: "empty netns refused", netns: "", conf: netconfJSON("1.1.0", nil, "eth0"), wantCode: types.ErrInvalidEnvironmentVariables},
		{name: "second attach fails: first undone, lease released", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0"),
			raild: fakeRaild{plan: movePlan("rail0", "rail1")}, failAttach: 2, wantCode: types.ErrInternal,
			wantLinks: "attach /ns/pod rail0 move;attach /ns/pod rail1 move;detach /ns/pod rail0 move", wantRaild: "allocate,release"},
		{name: "two rail networks, one prefix: config error", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			raild: fakeRaild{plan: movePlan("rail0")}, wantCode: types.ErrInvalidNetworkConfig, wantRaild: "allocate,release"},
		{name: "bad attach annotation", netns: "/ns/pod", wantCode: types.ErrInvalidNetworkConfig,
			conf: netconfJSON("1.1.0", map[string]any{"runtimeConfig": map[string]any{netconf.AnnotationsCapability: map[string]string{api.AnnotationAttach: "maybe"}}}, "eth0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := &fakeLinks{failAttach: tt.failAttach}
			raild := tt.raild
			p, out, logs := testPlugin(&raild, links)
			err := p.add(&skel.CmdArgs{ContainerID: "c1", Netns: tt.netns, IfName: "eth0", StdinData: tt.conf})
			if codeOf(err) != tt.wantCode || (tt.wantCode != 0) != (err != nil) {
				t.Fatalf("add = %v, want code %d", err, tt.wantCode)
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
