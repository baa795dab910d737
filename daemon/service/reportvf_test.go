package service

import (
	"context"
	"net/netip"
	"testing"

	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// TestReportedVFDistances: a vf-mode interface's distances to the pod's
// GPUs are its PF's, also for a VF without an RDMA device of its own (igbvf,
// as the SR-IOV rig's): raild's pod report and Events then name the GPUs
// the pod was placed by (the rig's crictl pods showed none).
func TestReportedVFDistances(t *testing.T) {
	rep := &fakeReporter{}
	svc, _ := newService(t, "sriov-vm-igb", onePool(), nil, func(o *Options) { o.Reporter = rep })
	req := allocReq("v", "0,1")
	req.Mode = api.ModeVF
	plan, err := svc.Allocate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.last) != 1 || len(rep.last[0].Interfaces) != len(plan.Interfaces) {
		t.Fatalf("reports = %v", rep.calls)
	}
	for _, iface := range rep.last[0].Interfaces {
		if iface.VF == nil || iface.VF.RDMADevice != "" {
			t.Fatalf("%s: VF %+v, want one without an RDMA device", iface.Name, iface.VF)
		}
		if len(iface.Distances) != 2 {
			t.Fatalf("%s (VF %s of %s) distances = %+v, want one per GPU", iface.Name, iface.VF.PCI, iface.VF.PF, iface.Distances)
		}
		for _, d := range iface.Distances {
			if d.Class == "" || (d.Chose && d.Class != iface.Distance) {
				t.Errorf("%s GPU %d: %+v, plan says %s", iface.Name, d.GPU, d, iface.Distance)
			}
		}
	}
}

// TestPickOfVFLease: a vf-mode lease holds its VF's PCI address; its pick
// (what "lease allocated" logs: gpus, distance, reason) is its PF's.
func TestPickOfVFLease(t *testing.T) {
	svc, _ := newService(t, "sriov-vm-igb", onePool(), nil)
	m := svc.Machine()
	pf, nic := m.PFs[0], m.NICs[0]
	if got, ok := m.PFNIC(pf); !ok || got.Name != nic.Name {
		t.Fatalf("PF %s stands as %+v, want %s", pf.PCI, got, nic.Name)
	}
	picks := []placement.Pick{{NIC: nic, GPUs: []int{0}, Reason: "closest"}}
	l := ipam.Lease{Sandbox: "s", IfName: "net1", Mode: string(api.ModeVF), NICs: []string{pf.VFs[1].PCI}, Address: netip.MustParsePrefix("10.77.0.1/24")}
	if p, ok := pickOf(picks, l, m); !ok || p.Reason != "closest" {
		t.Fatalf("pick of a lease of VF %s of %s = %+v, %v; want its PF's", pf.VFs[1].PCI, pf.PCI, p, ok)
	}
	other := l
	other.NICs = []string{"0000:ff:00.0"}
	if _, ok := pickOf(picks, other, m); ok {
		t.Fatal("a lease of no VF of the node matched")
	}
}
