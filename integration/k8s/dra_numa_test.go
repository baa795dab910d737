package k8s

import (
	"fmt"
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// hyperVMachine is the Azure ND H100 v5 shape the rig can stand in for:
// every GPU and every NIC alone on a PCIe root of its own (VMBus), so no
// NIC ever shares a GPU's root; its 8 GPUs, and 4 of its NICs (one per
// two GPUs, renamed mlx5_0..mlx5_3 as the rig's stand-ins expect) as RoCE
// ports on both NUMA nodes. Only the NUMA node tells close from far.
func hyperVMachine(t *testing.T) fakesys.Host {
	t.Helper()
	azure, ok := fakesys.Machine("azure-ndh100v5")
	if !ok {
		t.Fatal("no fake machine azure-ndh100v5")
	}
	host := fakesys.Host{Nodes: azure.Nodes}
	nics := 0
	for _, r := range azure.Roots {
		p := r.Ports[0]
		switch {
		case p.GPU != nil:
			host.Roots = append(host.Roots, r)
		case p.Card != nil && nics < 8:
			if nics%2 == 0 {
				card := *p.Card
				card.Funcs = append([]fakesys.Func(nil), card.Funcs...)
				card.Funcs[0].RDMA, card.Funcs[0].Netdev = fmt.Sprintf("mlx5_%d", nics/2), ""
				r.Ports = []fakesys.Slot{{Card: &card}}
				host.Roots = append(host.Roots, r)
			}
			nics++
		}
	}
	for i := range host.Roots {
		toEthernet(host.Roots[i].Ports)
	}
	return host
}

// TestRailDRADriverNUMA: on a Hyper-V-like node, where no NIC shares a
// GPU's PCIe root, the real scheduler cannot align a GPU and a Rail NIC by
// pcieRoot (the pod stays Pending with its reason), and aligned by numaNode
// it gets a NIC of its GPU's NUMA node, attached by Rail with the claim's
// status written.
func TestRailDRADriverNUMA(t *testing.T) {
	n, ok := startDRANode(t, fakeMachine+"-hyperv", hyperVMachine(t))
	if !ok {
		return
	}
	c := n.c
	for name, d := range n.railDevices(t) {
		if d.numa() < 0 {
			t.Fatalf("Rail device %s has no resource.kubernetes.io/numaNode", name)
		}
	}
	t.Run("aligned by pcieRoot: no NIC shares a GPU's root, the pod waits", func(t *testing.T) {
		c.kubectlApply(t, joinDocs(alignTemplate("gpu-nic-by-root", "resource.kubernetes.io/pcieRoot"), claimPod("by-root", "gpu-nic-by-root")))
		defer n.deletePods(t, "by-root")
		t.Logf("by-root Pending: %s", n.unschedulable(t, "by-root"))
	})
	t.Run("aligned by numaNode: a NIC of the GPU's NUMA node", func(t *testing.T) {
		c.kubectlApply(t, joinDocs(alignTemplate("gpu-nic-by-numa", "resource.kubernetes.io/numaNode"), claimPod("by-numa", "gpu-nic-by-numa")))
		defer n.deletePods(t, "by-numa")
		p := c.runningPod(t, "by-numa")
		claim := n.podClaim(t, p.Name)
		gpu, nic := claim.allocated("gpu.nvidia.com"), claim.allocated("rail.dev")
		if len(gpu) != 1 || len(nic) != 1 {
			t.Fatalf("claim %s allocated GPUs %v and Rail devices %v: want one each", claim.Metadata.Name, gpu, nic)
		}
		g, r := n.devicesOf(t, "gpu.nvidia.com")[gpu[0]], n.railDevices(t)[nic[0]]
		if g.numa() < 0 || g.numa() != r.numa() || g.root() == r.root() {
			t.Errorf("the scheduler gave GPU %s (NUMA %d, root %q) and Rail device %s (NUMA %d, root %q): want one NUMA node, two roots",
				gpu[0], g.numa(), g.root(), nic[0], r.numa(), r.root())
		}
		n.checkAttached(t, p, claim, nic[0])
	})
}
