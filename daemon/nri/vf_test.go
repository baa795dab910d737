package nri

import (
	"log/slog"
	"testing"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestVFLeaseDevices: a vf-mode lease holds its VF by PCI address (its
// NICs name the PF's port, which is not the pod's device); the
// VF's own RDMA device (mlx5 VFs have one) gives its containers their
// device nodes and HCA name; a VF without one (vfio-pci) gives none.
func TestVFLeaseDevices(t *testing.T) {
	m, spec := discoverMachine(t, "h100x8-cx7x8-sriov", fakesys.Options{})
	nd := buildNodeDevices(m, false, slog.New(slog.DiscardHandler))
	vf := spec.PFs[1].VFs[2]
	lease := ipam.Lease{Sandbox: "s", IfName: "net1", Mode: "vf", NICs: []string{"mlx5_1"}, VF: vf.PCI}
	if names := leasedNICs([]ipam.Lease{lease}, false); len(names) != 1 || names[0] != vf.PCI {
		t.Fatalf("leased NICs of a vf lease = %v, want its VF %s alone", names, vf.PCI)
	}
	got, ok := nd.nics[vf.PCI]
	if !ok || got.device != vf.RDMA || len(got.devices) == 0 || got.hca != vf.RDMA {
		t.Fatalf("devices of VF %s = %+v, %v; want its own RDMA device %s with its uverbs and HCA name", vf.PCI, got, ok, vf.RDMA)
	}
	if _, ok := nd.nics[spec.PFs[6].VFs[3].PCI]; ok {
		t.Fatalf("a vfio-pci VF got devices")
	}
}
