package service

import (
	"context"
	"testing"

	"github.com/railcni/rail/daemon/placement"
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

// TestVFLeaseForm: a vf-mode lease holds its PF's port in NICs (what its
// pick names: what "lease allocated" logs, gpus, distance, reason) and the
// VF's PCI address in VF, a VF of that PF.
func TestVFLeaseForm(t *testing.T) {
	svc, _ := newService(t, "sriov-vm-igb", onePool(), nil)
	req := allocReq("v", "0")
	req.Mode = api.ModeVF
	if _, err := svc.Allocate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	m := svc.Machine()
	leases := svc.SandboxLeases(req.Sandbox)
	if len(leases) != 1 {
		t.Fatalf("leases = %+v, want one", leases)
	}
	l := leases[0]
	vf, ok := m.VFByPCI(l.VF)
	if !ok {
		t.Fatalf("lease VF %q: no VF of the node", l.VF)
	}
	pf, _ := m.PFByPCI(vf.PF)
	nic, ok := m.PFNIC(pf)
	if !ok || len(l.NICs) != 1 || l.NICs[0] != nic.Name {
		t.Fatalf("lease NICs = %v, want the port of VF %s's PF %s (%s)", l.NICs, vf.PCI, pf.PCI, nic.Name)
	}
	picks := []placement.Pick{{NIC: nic, GPUs: []int{0}, Reason: "closest"}}
	if p, ok := pickOf(picks, l); !ok || p.Reason != "closest" {
		t.Fatalf("pick of a lease of VF %s of %s = %+v, %v; want its PF's", vf.PCI, pf.PCI, p, ok)
	}
	other := l
	other.NICs = []string{"mlx5_99"}
	if _, ok := pickOf(picks, other); ok {
		t.Fatal("a lease of another port matched")
	}
}
