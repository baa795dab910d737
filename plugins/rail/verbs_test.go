package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/api"
)

// netconfJSON is a chained rail netconf of version v; prevIfaces are the
// interfaces of the previous result (in /ns/pod unless "name@netns").
func netconfJSON(v string, extra map[string]any, prevIfaces ...string) []byte {
	conf := map[string]any{"cniVersion": v, "name": "railnet", "type": "rail"}
	for k, val := range extra {
		conf[k] = val
	}
	if prevIfaces != nil {
		var ifaces []map[string]any
		for _, name := range prevIfaces {
			sandbox := "/ns/pod"
			if n, ns, ok := strings.Cut(name, "@"); ok {
				name, sandbox = n, ns
			}
			ifaces = append(ifaces, map[string]any{"name": name, "sandbox": sandbox})
		}
		prev := map[string]any{"cniVersion": v, "interfaces": ifaces,
			"ips": []map[string]any{{"address": "10.1.0.5/24", "interface": 0}}}
		if strings.HasPrefix(v, "0.3") {
			prev["ips"] = []map[string]any{{"version": "4", "address": "10.1.0.5/24", "interface": 0}}
		}
		conf["prevResult"] = prev
	}
	data, _ := json.Marshal(conf)
	return data
}

func movePlan(names ...string) *api.Plan {
	plan := &api.Plan{Sandbox: "c1", CNIIfName: "eth0", Network: "railnet", Mode: api.ModeMove, Netns: "/ns/pod"}
	for i, n := range names {
		plan.Interfaces = append(plan.Interfaces, api.PlanInterface{Name: n, Pool: "p",
			NIC:       &api.NIC{RDMADevice: "mlx5_" + string(rune('0'+i)), Netdev: "ib" + string(rune('0'+i))},
			Addresses: []api.Address{{CIDR: "10.77.0." + string(rune('2'+i)) + "/24"}}})
	}
	return plan
}

// withPrevResult is a chained netconf with the cached result prev as is,
// and extra key-value pairs.
func withPrevResult(prev any, extra ...string) []byte {
	conf := map[string]any{"cniVersion": "1.1.0", "name": "railnet", "type": "rail", "prevResult": prev}
	for i := 0; i+1 < len(extra); i += 2 {
		conf[extra[i]] = extra[i+1]
	}
	data, _ := json.Marshal(conf)
	return data
}

func badLeaseAddress() *api.Plan {
	plan := movePlan("rail0")
	plan.Interfaces[0].Addresses[0].CIDR = "10.77.0.2"
	return plan
}

func codeOf(err error) uint {
	var cniErr *types.Error
	if errors.As(err, &cniErr) {
		return cniErr.Code
	}
	return 0
}

func TestDel(t *testing.T) {
	fifo := fifoPath(t)
	tests := []struct {
		name       string
		netns      string
		conf       []byte
		raild      fakeRaild
		owned      []string // the pod's interfaces whose alias names this attachment
		failDetach bool
		wantCode   uint   // 0: success
		wantLinks  string // the netlink calls, joined by ";"
		wantRaild  string
	}{
		{name: "lease, netns alive", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			raild: fakeRaild{plan: movePlan("rail0", "rail1")}, wantLinks: "detach /ns/pod rail0 move;detach /ns/pod rail1 move", wantRaild: "check,release"},
		{name: "lease decides the mode, not the netconf", netns: "/ns/pod", conf: netconfJSON("1.1.0", map[string]any{"mode": "macvlan"}, "eth0", "rail0"),
			raild: fakeRaild{plan: movePlan("rail0")}, wantLinks: "detach /ns/pod rail0 move", wantRaild: "check,release"},
		{name: "second DEL without netns uses the recorded one", netns: "", conf: netconfJSON("1.1.0", nil),
			raild: fakeRaild{plan: movePlan("rail0")}, wantLinks: "detach /ns/pod rail0 move", wantRaild: "check,release"},
		{name: "lease, netns gone: the NIC is found in the host", netns: "/ns/gone", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			raild: fakeRaild{plan: movePlan("rail0")}, wantLinks: "detach /ns/gone rail0 move", wantRaild: "check,release"},
		{name: "no lease: cached result, mode from the alias, eth0 untouched", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0", "rail0", "rail1"),
			wantLinks: "detach /ns/pod rail0 ;detach /ns/pod rail1 ", wantRaild: "check,release"},
		{name: "no lease, netns gone: nothing to touch", netns: "/ns/gone", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			wantLinks: "", wantRaild: "check,release"},
		{name: "a FIFO as netns: gone, nothing opened, DEL succeeds", netns: fifo, conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			wantLinks: "", wantRaild: "check,release"},
		{name: "pass-through pod: eth0 is only looked at (pkg/attach leaves a link without rail's alias alone)", netns: "/ns/pod",
			conf: netconfJSON("0.3.1", nil, "eth0"), wantLinks: "detach /ns/pod eth0 ", wantRaild: "check,release"},
		{name: "raild unreachable: cached result, success", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			raild: fakeRaild{checkErr: unreachable(), relErr: unreachable()}, wantLinks: "detach /ns/pod rail0 ", wantRaild: "check,release"},
		{name: "raild error other than unknown: DEL fails, nothing touched", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			raild: fakeRaild{checkErr: &api.Error{Code: api.CodeIO, Msg: "lease store"}}, wantCode: api.CodeIO, wantLinks: "", wantRaild: "check"},
		{name: "detach fails: the lease stays for the next DEL", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			raild: fakeRaild{plan: movePlan("rail0")}, failDetach: true, wantCode: types.ErrInternal, wantLinks: "detach /ns/pod rail0 move", wantRaild: "check"},
		{name: "release refused: DEL fails", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			raild: fakeRaild{plan: movePlan("rail0"), relErr: &api.Error{Code: api.CodeIO, Msg: "lease store"}}, wantCode: api.CodeIO,
			wantLinks: "detach /ns/pod rail0 move", wantRaild: "check,release"},
		{name: "own netns, no lease: nothing in the host is touched", netns: "/ns/host", conf: netconfJSON("1.1.0", nil, "eth0", "rail0@/ns/host"),
			wantLinks: "", wantRaild: "check,release"},
		{name: "alone: net1 and net1-1 from the cached result", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "net1", "net1-1", "eth0"),
			wantLinks: "detach /ns/pod net1 ;detach /ns/pod net1-1 ", wantRaild: "check,release"},
		{name: "cached prevResult does not parse (bad address), lease: detached by the lease", netns: "/ns/pod",
			conf:  withPrevResult(map[string]any{"cniVersion": "1.1.0", "ips": []map[string]any{{"address": "10.1.0.5"}}}),
			raild: fakeRaild{plan: movePlan("rail0")}, wantLinks: "detach /ns/pod rail0 move", wantRaild: "check,release"},
		{name: "cached prevResult of an unknown version, no lease: DEL succeeds", netns: "/ns/pod",
			conf: withPrevResult(map[string]any{"cniVersion": "9.9.9"}), wantRaild: "check,release"},
		{name: "no lease, cached prevResult does not parse: rail's interfaces found by their alias", netns: "/ns/pod",
			conf: withPrevResult("garbage"), owned: []string{"rail0", "rail1"},
			wantLinks: "detach /ns/pod rail0 ;detach /ns/pod rail1 ", wantRaild: "check,release"},
		{name: "no lease: the cached result's interfaces and the alias's, each once", netns: "/ns/pod",
			conf: netconfJSON("1.1.0", nil, "eth0", "rail0"), owned: []string{"rail1", "rail0"},
			wantLinks: "detach /ns/pod rail0 ;detach /ns/pod rail1 ", wantRaild: "check,release"},
		{name: "no lease, netns gone: no alias is read", netns: "/ns/gone", conf: withPrevResult("garbage"), owned: []string{"rail0"},
			wantRaild: "check,release"},
		{name: "cached prevResult is not an object: DEL succeeds", netns: "/ns/pod", conf: withPrevResult("garbage"),
			raild: fakeRaild{plan: movePlan("rail0")}, wantLinks: "detach /ns/pod rail0 move", wantRaild: "check,release"},
		{name: "a lease address that no longer parses does not stop the detach", netns: "/ns/pod", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"),
			raild: fakeRaild{plan: badLeaseAddress()}, wantLinks: "detach /ns/pod rail0 move", wantRaild: "check,release"},
		{name: "a netconf that is bad besides its prevResult still fails", netns: "/ns/pod",
			conf: withPrevResult("garbage", "mode", "teleport"), wantCode: types.ErrInvalidNetworkConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := &fakeLinks{failDetach: tt.failDetach, attached: map[string]bool{}, owners: map[string][]string{"c1/eth0/railnet": tt.owned}}
			for _, name := range tt.owned {
				links.attached[tt.netns+"/"+name] = true
			}
			raild := tt.raild
			p, _, _ := testPlugin(&raild, links)
			ifname := "eth0"
			if strings.HasPrefix(tt.name, "alone") {
				ifname = "net1"
			}
			err := p.del(&skel.CmdArgs{ContainerID: "c1", Netns: tt.netns, IfName: ifname, StdinData: tt.conf})
			if codeOf(err) != tt.wantCode || (tt.wantCode != 0) != (err != nil) {
				t.Fatalf("del = %v, want code %d", err, tt.wantCode)
			}
			if got := strings.Join(links.log, ";"); got != tt.wantLinks {
				t.Errorf("netlink calls = %q, want %q", got, tt.wantLinks)
			}
			if got := raild.called(); got != tt.wantRaild {
				t.Errorf("raild calls = %q, want %q", got, tt.wantRaild)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		conf     []byte
		raild    fakeRaild
		attached []string
		wantCode uint
	}{
		{name: "lease and interface agree", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"), raild: fakeRaild{plan: movePlan("rail0")},
			attached: []string{"/ns/pod/rail0"}},
		{name: "interface missing", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"), raild: fakeRaild{plan: movePlan("rail0")},
			wantCode: types.ErrInternal},
		{name: "not in prevResult", conf: netconfJSON("1.1.0", nil, "eth0"), raild: fakeRaild{plan: movePlan("rail0")},
			attached: []string{"/ns/pod/rail0"}, wantCode: types.ErrInternal},
		{name: "pass-through pod: no lease, no interface of rail's", conf: netconfJSON("1.1.0", nil, "eth0")},
		{name: "rail's interface without a lease", conf: netconfJSON("1.1.0", nil, "eth0", "rail0"), attached: []string{"/ns/pod/rail0"},
			wantCode: api.CodeUnknownContainer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := &fakeLinks{attached: map[string]bool{}}
			for _, a := range tt.attached {
				links.attached[a] = true
			}
			raild := tt.raild
			p, _, _ := testPlugin(&raild, links)
			err := p.check(&skel.CmdArgs{ContainerID: "c1", Netns: "/ns/pod", IfName: "eth0", StdinData: tt.conf})
			if codeOf(err) != tt.wantCode || (tt.wantCode != 0) != (err != nil) {
				t.Fatalf("check = %v, want code %d", err, tt.wantCode)
			}
		})
	}
}

// fifoPath is a FIFO where a netns should be: opening it would wait for a
// writer.
func fifoPath(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "netns.fifo")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
