package service

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/railcni/rail/daemon/sriov"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// TestVFLeaseOfAnOlderRaild: a node upgraded with a VF pod running. The
// older raild's lease names the VF in NICs; raild opens the store with
// the node read (sriov.LeasedVF), so the lease holds its PF's port and
// the VF, and keeps working: the pod's repeated ADD (and so its DEL's
// plan) names its VF, no other pod gets that VF, and the node's holders
// name it.
func TestVFLeaseOfAnOlderRaild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	pools, err := ipam.NewPools(onePool(), "node1")
	if err != nil {
		t.Fatal(err)
	}
	var vfPCI, port string
	svc, _ := newService(t, "h100x8-cx7x8-sriov", onePool(), nil, func(o *Options) {
		m := o.Machine()
		pf := m.PFs[0]
		nic, _ := m.PFNIC(pf)
		vfPCI, port = pf.VFs[1].PCI, nic.Name
		old, err := ipam.Open(path, pools, ipam.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// What the older raild wrote: the VF's PCI address in NICs, no VF field.
		if _, err := old.AllocateMany([]ipam.Request{{Sandbox: "old", IfName: "rail0", CNIIfName: "eth0", Network: "net", Pool: "rail",
			NICs: []string{vfPCI}, Mode: string(api.ModeVF), PodNamespace: "default", PodName: "pod-old"}}); err != nil {
			t.Fatal(err)
		}
		if err := old.Close(); err != nil {
			t.Fatal(err)
		}
		alloc, err := ipam.Open(path, pools, ipam.Options{VFOf: sriov.LeasedVF(m)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { alloc.Close() })
		o.Alloc = alloc
	})
	leases := svc.SandboxLeases("old")
	if len(leases) != 1 || leases[0].VF != vfPCI || !slices.Equal(leases[0].NICs, []string{port}) {
		t.Fatalf("leases of the old pod: %+v, want one holding VF %s on port %s", leases, vfPCI, port)
	}
	req := allocReq("old", "0")
	req.Mode = api.ModeVF
	plan, err := svc.Allocate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Interfaces) != 1 || plan.Interfaces[0].VF == nil || plan.Interfaces[0].VF.PCI != vfPCI || len(svc.SandboxLeases("old")) != 1 {
		t.Fatalf("repeated ADD of the old pod: %+v, want its lease's VF %s", plan, vfPCI)
	}
	other := allocReq("new", "0")
	other.Mode, other.Selector.NICs = api.ModeVF, []string{vfPCI}
	_, err = svc.Allocate(context.Background(), other)
	if apiErr := (*api.Error)(nil); !errors.As(err, &apiErr) || apiErr.Code != api.CodeTryAgainLater {
		t.Fatalf("a new pod pinning the old pod's VF %s: %v, want try again later (held)", vfPCI, err)
	}
	if got := svc.NICHolders()[vfPCI]; got != "default/pod-old" {
		t.Errorf("holders of VF %s: %q, want default/pod-old", vfPCI, got)
	}
}
