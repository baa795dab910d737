package service

import (
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestSoftRoCEPlanAndSweep: on a softRoCE node each planned interface
// names the rxe of its lease (none on other nodes), and the start-up sweep
// keeps exactly the leases' devices: a device whose lease went (DEL, GC)
// is stale, a repeated listing is reported once.
func TestSoftRoCEPlanAndSweep(t *testing.T) {
	for _, soft := range []bool{true, false} {
		svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil, func(o *Options) { o.SoftRoCE = soft })
		req := allocReq("a", "0,2")
		plan, err := svc.Allocate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, i := range plan.Interfaces {
			want := ""
			if soft {
				want = rdma.SoftRoCEName("a", i.Name)
			}
			if i.SoftRoCE != want {
				t.Errorf("softRoCE %v: interface %s names rxe %q, want %q", soft, i.Name, i.SoftRoCE, want)
			}
			names = append(names, rdma.SoftRoCEName("a", i.Name))
		}
		if len(names) != 2 {
			t.Fatalf("plan %+v: want two interfaces", plan.Interfaces)
		}
		gone := rdma.SoftRoCEName("b", "rail0")
		listed := append(slices.Clone(names), gone, gone)
		if stale := svc.StaleSoftRoCE(listed); !slices.Equal(stale, []string{gone}) {
			t.Errorf("softRoCE %v: stale %v, want [%s]", soft, stale, gone)
		}
		if err := svc.Release(t.Context(), api.AttachmentRequest{Sandbox: "a", CNIIfName: "eth0", Network: "net"}); err != nil {
			t.Fatal(err)
		}
		if stale := svc.StaleSoftRoCE(names); !slices.Equal(stale, names) {
			t.Errorf("softRoCE %v: after release, stale %v, want %v", soft, stale, names)
		}
	}
}

// TestIPVLANOnInfiniBand: ipvlan (and macvlan) on a node of InfiniBand
// ports is refused, naming ipoib, the mode that shares an IB port.
func TestIPVLANOnInfiniBand(t *testing.T) {
	svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil)
	for _, mode := range []api.Mode{api.ModeIPVLAN, api.ModeMacvlan} {
		req := allocReq("a", "0")
		req.Mode = mode
		_, err := svc.Allocate(t.Context(), req)
		if err == nil || !strings.Contains(err.Error(), "use mode ipoib for InfiniBand ports") {
			t.Errorf("mode %s on InfiniBand ports: %v, want a refusal naming ipoib", mode, err)
		}
	}
}

// TestSoftRoCEOnNetdevNICs: on a softRoCE VM whose NICs have no RDMA
// device, a 2-GPU pod in macvlan mode gets one interface on each GPU's
// virtio-net NIC: the lease names the netdev, the plan's NIC has the
// netdev and PCI function and no RDMA device or port, and each interface
// names the rxe the plugin makes on it. Before netdev NICs placement found
// no NIC on such a node.
func TestSoftRoCEOnNetdevNICs(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "softroce-vm", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.DiscoverWith(root, topology.Options{NetdevNICs: true})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Machine: fixed(m), Rails: map[string]int{"eth1": 0, "eth2": 1}, Alloc: openAlloc(t, onePool()),
		GPUs: gpuSource(m, nil), SoftRoCE: true, Limits: placement.Limits{SoftRoCE: true}})
	if err != nil {
		t.Fatal(err)
	}
	req := allocReq("a", "0,1")
	req.Mode = api.ModeMacvlan
	plan, err := svc.Allocate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Interfaces) != 2 {
		t.Fatalf("plan %+v: want two interfaces", plan.Interfaces)
	}
	for i, iface := range plan.Interfaces {
		want, _ := m.NICByName([]string{"eth1", "eth2"}[i])
		if n := iface.NIC; n == nil || n.Netdev != want.Netdev || n.PCI != want.PCI || n.RDMADevice != "" || n.Port != 0 || n.LinkLayer != topology.Ethernet {
			t.Errorf("interface %s NIC %+v, want %s at %s without an RDMA device", iface.Name, iface.NIC, want.Netdev, want.PCI)
		}
		if iface.SoftRoCE != rdma.SoftRoCEName("a", iface.Name) {
			t.Errorf("interface %s names rxe %q", iface.Name, iface.SoftRoCE)
		}
		if len(iface.GPUs) != 1 || iface.GPUs[0] != i {
			t.Errorf("interface %s for GPUs %v, want [%d]", iface.Name, iface.GPUs, i)
		}
	}
	var held []string
	for _, l := range svc.Leases() {
		held = append(held, l.NICs...)
	}
	slices.Sort(held)
	if !slices.Equal(held, []string{"eth1", "eth2"}) {
		t.Errorf("leases hold %v, want eth1 and eth2", held)
	}
	move := allocReq("b", "0")
	if _, err := svc.Allocate(t.Context(), move); err == nil || !strings.Contains(err.Error(), "refused on a softRoCE node") {
		t.Errorf("move on a softRoCE node: %v, want the refusal", err)
	}
}
