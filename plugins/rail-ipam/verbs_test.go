package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/verbs"
)

// fakeRaild answers as configured and records what it was asked.
type fakeRaild struct {
	plan     *api.Plan
	status   api.Status
	allocErr error
	checkErr error
	relErr   error
	statErr  error
	calls    []string
	alloc    api.AllocateRequest
	gc       api.GCRequest
}

func (f *fakeRaild) Allocate(_ context.Context, req api.AllocateRequest) (*api.Plan, error) {
	f.calls, f.alloc = append(f.calls, "allocate"), req
	if f.allocErr != nil {
		return nil, f.allocErr
	}
	return f.plan, nil
}

func (f *fakeRaild) Check(context.Context, api.AttachmentRequest) (*api.Plan, error) {
	f.calls = append(f.calls, "check")
	return f.plan, f.checkErr
}

func (f *fakeRaild) Release(context.Context, api.AttachmentRequest) error {
	f.calls = append(f.calls, "release")
	return f.relErr
}

func (f *fakeRaild) Status(_ context.Context, pool string) (*api.Status, error) {
	f.calls = append(f.calls, "status "+pool)
	return &f.status, f.statErr
}

func (f *fakeRaild) GC(_ context.Context, req api.GCRequest) (*api.GCResult, error) {
	f.calls, f.gc = append(f.calls, "gc"), req
	return &api.GCResult{}, nil
}

// codeOf is a CNI error's code, 0 for nil, 1000 for an error of another kind.
func codeOf(err error) uint {
	var cniErr *types.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &cniErr):
		return cniErr.Code
	}
	return 1000
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) {
	return 0, errors.New("write /dev/stdout: broken pipe")
}

// macvlanConf is a macvlan netconf whose ipam section is rail-ipam's.
func macvlanConf(version string, ipam map[string]any, extra map[string]any) []byte {
	section := map[string]any{"type": "rail-ipam", "pool": "decode", "socket": "/run/test/raild.sock"}
	for k, v := range ipam {
		section[k] = v
	}
	conf := map[string]any{"cniVersion": version, "name": "macnet", "type": "macvlan", "master": "ens1", "ipam": section}
	for k, v := range extra {
		conf[k] = v
	}
	data, _ := json.Marshal(conf)
	return data
}

func ipamPlan(fresh bool, cidrs ...string) *api.Plan {
	iface := api.PlanInterface{Name: "net1", Pool: "decode"}
	for _, c := range cidrs {
		iface.Addresses = append(iface.Addresses, api.Address{CIDR: c, Gateway: "10.77.0.1"})
	}
	return &api.Plan{Sandbox: "c1", CNIIfName: "net1", Network: "macnet", Mode: api.ModeIPAM, Interfaces: []api.PlanInterface{iface}, Fresh: fresh}
}

func unreachable() error {
	_, err := api.NewClient("/nonexistent/raild.sock", time.Second).Status(context.Background(), "")
	return err
}

func TestVerbs(t *testing.T) {
	gcConf := macvlanConf("1.1.0", nil, map[string]any{"cni.dev/valid-attachments": []map[string]string{{"containerID": "c1", "ifname": "net1"}}})
	tests := []struct {
		name      string
		verb      func(p *plugin, args *skel.CmdArgs) error
		conf      []byte
		raild     fakeRaild
		failWrite bool
		wantCode  uint   // 0: success
		wantErr   string // in the error
		wantOut   string // in the printed result
		wantCalls string
	}{
		{name: "add: the lease's address and gateway", verb: (*plugin).add, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{plan: ipamPlan(true, "10.77.0.9/24")}, wantOut: `"address": "10.77.0.9/24"`, wantCalls: "allocate"},
		{name: "add: a 0.3.1 main plugin gets a 0.3.1 result", verb: (*plugin).add, conf: macvlanConf("0.3.1", nil, nil),
			raild: fakeRaild{plan: ipamPlan(true, "10.77.0.9/24", "fd00:77::9/64")}, wantOut: `"version": "6"`, wantCalls: "allocate"},
		{name: "add: raild unreachable: try again", verb: (*plugin).add, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{allocErr: unreachable()}, wantCode: api.CodeTryAgainLater, wantCalls: "allocate"},
		{name: "add: raild's code passes through", verb: (*plugin).add, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{allocErr: &api.Error{Code: api.CodePoolExhausted, Msg: "pool exhausted"}}, wantCode: api.CodePoolExhausted,
			wantErr: "raild allocate: pool exhausted", wantCalls: "allocate"},
		{name: "add: bad planned address: the fresh lease is released", verb: (*plugin).add, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{plan: ipamPlan(true, "10.77.0.300/24")}, wantCode: types.ErrInternal, wantErr: "bad address", wantCalls: "allocate,release"},
		{name: "add: bad planned address on a repeated ADD: the lease stays", verb: (*plugin).add, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{plan: ipamPlan(false, "10.77.0.300/24")}, wantCode: types.ErrInternal, wantCalls: "allocate"},
		{name: "add: result not written: the fresh lease is released", verb: (*plugin).add, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{plan: ipamPlan(true, "10.77.0.9/24")}, failWrite: true, wantCode: types.ErrInternal, wantErr: "broken pipe",
			wantCalls: "allocate,release"},
		{name: "add: release fails in the rollback: reported", verb: (*plugin).add, conf: macvlanConf("1.1.0", nil, nil),
			raild:     fakeRaild{plan: ipamPlan(true, "10.77.0.9/24"), relErr: &api.Error{Code: api.CodeIO, Msg: "lease store"}},
			failWrite: true, wantCode: types.ErrInternal, wantErr: "rollback: release the lease: lease store", wantCalls: "allocate,release"},
		{name: "add: bad ipam section: nothing asked", verb: (*plugin).add, conf: macvlanConf("1.1.0", map[string]any{"pools": "x"}, nil),
			wantCode: types.ErrUnsupportedField, wantErr: "pools"},
		{name: "add: bad K8S args", verb: (*plugin).add, conf: macvlanConf("1.1.0", nil, nil), wantCode: types.ErrInvalidEnvironmentVariables},
		{name: "del: released", verb: (*plugin).del, conf: macvlanConf("1.1.0", nil, nil), wantCalls: "release"},
		{name: "del: raild unreachable is not an error", verb: (*plugin).del, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{relErr: unreachable()}, wantCalls: "release"},
		{name: "del: a store error fails", verb: (*plugin).del, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{relErr: &api.Error{Code: api.CodeIO, Msg: "lease store"}}, wantCode: api.CodeIO, wantCalls: "release"},
		{name: "check: lease held", verb: (*plugin).check, conf: macvlanConf("1.1.0", nil, nil), raild: fakeRaild{plan: ipamPlan(false, "10.77.0.9/24")},
			wantCalls: "check"},
		{name: "check: no lease", verb: (*plugin).check, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{checkErr: &api.Error{Code: api.CodeUnknownContainer, Msg: "no lease"}}, wantCode: api.CodeUnknownContainer, wantCalls: "check"},
		{name: "status: healthy pool", verb: (*plugin).status, conf: macvlanConf("1.1.0", nil, nil), raild: fakeRaild{status: api.Status{Healthy: true}},
			wantCalls: "status decode"},
		{name: "status: pool full", verb: (*plugin).status, conf: macvlanConf("1.1.0", nil, nil),
			raild: fakeRaild{status: api.Status{Reason: "pool decode is full"}}, wantCode: api.CodeNotAvailable, wantErr: "full", wantCalls: "status decode"},
		{name: "status: raild unreachable", verb: (*plugin).status, conf: macvlanConf("1.1.0", nil, nil), raild: fakeRaild{statErr: unreachable()},
			wantCode: api.CodeNotAvailable, wantCalls: "status decode"},
		{name: "gc: the valid attachments go to raild", verb: (*plugin).gc, conf: gcConf, wantCalls: "gc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raild := tt.raild
			var out bytes.Buffer
			p := &plugin{loadConf: newPlugin().loadConf, stdout: &out,
				raild: func(socket string, _ time.Duration) verbs.Raild {
					if socket != "/run/test/raild.sock" {
						t.Errorf("client for socket %q, want the netconf's", socket)
					}
					return &raild
				}}
			if tt.failWrite {
				p.stdout = failingWriter{}
			}
			args := &skel.CmdArgs{ContainerID: "c1", Netns: "/ns/pod", IfName: "net1", StdinData: tt.conf,
				Args: "K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0"}
			if strings.HasSuffix(tt.name, "bad K8S args") {
				args.Args = "K8S_POD_NAME"
			}
			err := tt.verb(p, args)
			if codeOf(err) != tt.wantCode || (err == nil) != (tt.wantCode == 0) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("%v, want code %d containing %q", err, tt.wantCode, tt.wantErr)
			}
			if !strings.Contains(out.String(), tt.wantOut) || (tt.wantCode != 0 && out.Len() > 0) {
				t.Errorf("printed %s, want it to contain %s", out.String(), tt.wantOut)
			}
			if got := strings.Join(raild.calls, ","); got != tt.wantCalls {
				t.Errorf("raild calls %q, want %q", got, tt.wantCalls)
			}
			if raild.alloc.Sandbox != "" && (raild.alloc.Mode != api.ModeIPAM || raild.alloc.Pool != "decode" ||
				raild.alloc.PodName != "web-0" || raild.alloc.CNIIfName != "net1" || raild.alloc.Network != "macnet") {
				t.Errorf("allocate asked %+v, want mode ipam, pool decode, pod web-0, net1 of macnet", raild.alloc)
			}
			if raild.gc.Network != "" && (raild.gc.Network != "macnet" || len(raild.gc.Valid) != 1 || raild.gc.Valid[0].Sandbox != "c1") {
				t.Errorf("gc asked %+v, want c1 of macnet valid", raild.gc)
			}
		})
	}
}
