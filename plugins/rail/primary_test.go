package main

import (
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/netconf"
)

// TestAllocateRequestNamesPrimaryAndPKey: chained, raild learns the pod's
// primary interface from prevResult (for NCCL_SOCKET_IFNAME) and the
// IPoIB P_Key from the netconf (for NCCL_IB_PKEY); alone it learns no
// primary.
func TestAllocateRequestNamesPrimaryAndPKey(t *testing.T) {
	idx := func(i int) *int { return &i }
	bridge := &current.Result{
		Interfaces: []*current.Interface{{Name: "veth1a2b"}, {Name: "net0", Sandbox: "/ns/pod"}},
		IPs:        []*current.IPConfig{{Interface: idx(1)}},
	}
	hostOnly := &current.Result{
		Interfaces: []*current.Interface{{Name: "veth1a2b"}},
		IPs:        []*current.IPConfig{{Interface: idx(0)}, {Interface: idx(7)}, {}},
	}
	tests := []struct {
		name      string
		conf      string
		prev      *current.Result
		wantIf    string
		wantPKey  uint16
		wantChain bool
	}{
		{name: "chained: the sandbox interface holding the first address", prev: bridge, wantIf: "net0", wantChain: true},
		{name: "chained, prevResult names no sandbox interface: CNI_IFNAME", prev: hostOnly, wantIf: "eth0", wantChain: true},
		{name: "chained, empty prevResult: CNI_IFNAME", prev: &current.Result{}, wantIf: "eth0", wantChain: true},
		{name: "alone (Multus delegate): none", prev: nil, wantIf: ""},
		{name: "ipoib with a P_Key", conf: `,"mode":"ipoib","pkey":"0x8001"`, prev: nil, wantPKey: 0x8001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := netconf.LoadRail([]byte(`{"cniVersion":"1.0.0","name":"n","type":"rail"` + tt.conf + `}`))
			if err != nil {
				t.Fatal(err)
			}
			req := netconf.AllocateRequest(&skel.CmdArgs{ContainerID: "c1", IfName: "eth0"}, conf, tt.prev, netconf.PodKeys{})
			if req.PrimaryIfName != tt.wantIf || req.PKey != tt.wantPKey || req.Chained != tt.wantChain {
				t.Fatalf("primaryIfName %q, pkey %#x, chained %v; want %q, %#x, %v",
					req.PrimaryIfName, req.PKey, req.Chained, tt.wantIf, tt.wantPKey, tt.wantChain)
			}
		})
	}
}
