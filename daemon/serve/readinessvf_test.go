package serve

import (
	"net/netip"
	"testing"

	"github.com/railcni/rail/daemon/attached"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// TestReadinessVFLeases: a vf-mode lease holds its VF by PCI address (its
// NICs name the PF's port, never the pod's device); the rail's RDMA port
// is the VF's own device's (an mlx5 VF's), or, when the
// host no longer shows it (exclusive mode moved it into the pod), the one
// placement gave; a VF with no RDMA device of its own (igbvf, as the
// SR-IOV rig has) has none to check. The PCI address is never taken for
// an RDMA device name (the SR-IOV rig's pods were reported not ready:
// "cannot read the state of 0000:01:10.0 port 1").
func TestReadinessVFLeases(t *testing.T) {
	_, m := discovered(t, "h100x8-cx7x8-sriov", nil)
	var withRDMA, without topology.VF
	for _, pf := range m.PFs {
		for _, vf := range pf.VFs {
			switch {
			case vf.RDMA != "" && withRDMA.PCI == "":
				withRDMA = vf
			case vf.RDMA == "" && without.PCI == "":
				without = vf
			}
		}
	}
	if withRDMA.PCI == "" || without.PCI == "" {
		t.Fatalf("the machine lacks a VF with and one without an RDMA device: %+v", m.PFs)
	}
	nic, ok := m.NICByName(withRDMA.RDMA)
	if !ok {
		t.Fatalf("no NIC %s", withRDMA.RDMA)
	}
	pfPort := func(vf topology.VF) string {
		pf, _ := m.PFByPCI(vf.PF)
		port, ok := m.PFNIC(pf)
		if !ok {
			t.Fatalf("PF %s of VF %s has no port", vf.PF, vf.PCI)
		}
		return port.Name
	}
	tests := []struct {
		name   string
		vf     string
		pf     string // its PF's port, which the lease names in NICs
		placed string // the RDMA device placement reported at ADD, "" none
		device string
		port   int
		ll     topology.LinkLayer
	}{
		{name: "the VF's own RDMA device", vf: withRDMA.PCI, pf: pfPort(withRDMA), device: withRDMA.RDMA, port: 1, ll: nic.LinkLayer},
		{name: "upper-case PCI address", vf: "0000:" + upper(withRDMA.PCI[5:]), pf: pfPort(withRDMA), device: withRDMA.RDMA, port: 1, ll: nic.LinkLayer},
		{name: "a VF without one", vf: without.PCI, pf: pfPort(without)},
		{name: "a VF without one now: as placed", vf: without.PCI, pf: pfPort(without), placed: "mlx5_9", device: "mlx5_9", port: 1, ll: topology.Ethernet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ipam.Lease{Sandbox: "s1", IfName: "net1", Mode: string(api.ModeVF), Address: netip.MustParsePrefix("10.0.0.1/24"),
				NICs: []string{tt.pf}, VF: tt.vf, Netns: "/var/run/netns/s1"}
			r := &railReadiness{placed: attached.NewPlacements(nil), leases: func() []ipam.Lease { return []ipam.Lease{l} }, rdmaNetns: rdma.NetnsShared}
			if tt.placed != "" {
				r.placed.Attached(service.Attached{Sandbox: "s1", Network: "vfnet", Interfaces: []service.AttachedInterface{{
					PlanInterface: api.PlanInterface{Name: "net1", NIC: &api.NIC{RDMADevice: tt.placed, LinkLayer: "Ethernet"}}}}})
			}
			got := r.rail(l, m, -1)
			if got.Device != tt.device || got.Port != tt.port || got.LinkLayer != tt.ll {
				t.Fatalf("rail of VF %s: device %q port %d link layer %q, want %q %d %q", tt.vf, got.Device, got.Port, got.LinkLayer, tt.device, tt.port, tt.ll)
			}
		})
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
