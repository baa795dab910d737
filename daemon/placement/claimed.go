package placement

import (
	"fmt"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// ClaimedReason is the reason of a pick a DRA claim made.
const ClaimedReason = "allocated by the scheduler (DRA claim)"

// Claimed gives in exactly the NICs (ports, by name) a DRA claim
// allocated, in that order, instead of choosing: the scheduler chose
// them. What placement refuses still holds: the node must serve the mode,
// the port's link layer must fit it, a NIC held so that the mode cannot
// share it (moved into another pod, or shared when the mode moves) and
// the node's own NICs are refused, and protection is read again before
// it answers. Each pick's class is its distance to the closest of the
// pod's GPUs (SYS without GPUs), reported, never a refusal.
func (n *Node) Claimed(in Input, nics []string, use Use) ([]Pick, error) {
	linkLayer, err := n.checkModeOnly(in)
	if err != nil {
		return nil, err
	}
	exclude, _, moved := constraints(use, in.Mode)
	if n.RDMANetns == rdma.NetnsExclusive {
		excludeSiblings(n.Machine, exclude, moved)
	}
	protected := n.protection()
	excludeProtected(exclude, protected, in.Mode)
	picks := make([]Pick, 0, len(nics))
	for _, name := range nics {
		nic, ok := n.Machine.NICByName(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("claimed NIC %s is not on this node now", name)
		case !linkLayer.Matches(nic.LinkLayer):
			return nil, fmt.Errorf("claimed NIC %s is %s; mode %s needs %s", name, nic.LinkLayer, in.Mode, linkLayer)
		}
		if why, refused := exclude[name]; refused {
			return nil, fmt.Errorf("claimed NIC %s: %s", name, why)
		}
		pick := Pick{NIC: nic, GPUs: in.GPUs, Class: topology.SYS, Reason: ClaimedReason}
		for _, g := range in.GPUs {
			pick.Class = min(pick.Class, n.gpuClass(g, nic))
		}
		picks = append(picks, pick)
	}
	fresh, refused, err := n.recheck(picks, protected, in.Mode)
	if err != nil {
		return nil, err
	}
	for _, p := range picks {
		if why := fresh[p.NIC.Name].Refusal(in.Mode.Exclusive()); refused && why != "" {
			return nil, fmt.Errorf("claimed NIC %s: %s", p.NIC.Name, why)
		}
	}
	return picks, nil
}

// checkModeOnly is admit without the NIC selectors: the mode's link layer
// and the node serving the mode.
func (n *Node) checkModeOnly(in Input) (topology.LinkLayer, error) {
	linkLayer, err := api.SelectorLinkLayer(in.Mode, in.LinkLayer)
	if err != nil {
		return "", err
	}
	return linkLayer, n.Limits.checkMode(in.Mode)
}
