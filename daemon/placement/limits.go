package placement

import (
	"fmt"
	"slices"

	"github.com/railcni/rail/pkg/api"
)

// Limits are the node's own bounds on placement, from raild's config or
// the node class it matched: the NICs rail may place here and the attach
// modes it may serve (empty: any).
type Limits struct {
	NICs   []string // names or PCI addresses
	Modes  []api.Mode
	Source string // "config" or "node class v100", for messages
	// SoftRoCE: the node is in softRoCE mode, where move mode is refused
	// (errSoftRoCEMove).
	SoftRoCE bool
}

// checkMode refuses a mode the node does not serve.
func (l Limits) checkMode(mode api.Mode) error {
	if l.SoftRoCE && mode == api.ModeMove {
		return errSoftRoCEMove
	}
	if len(l.Modes) == 0 || slices.Contains(l.Modes, mode) {
		return nil
	}
	return fmt.Errorf("mode %s is not served on this node (%s modes: %s): use one of those, or a network for another node class",
		mode, l.source(), api.ModeList(l.Modes))
}

// ServedModes are the modes the node serves, for what publishes them
// (the DRA driver's devices): its modes list (nil: every mode), without
// move on a softRoCE node.
func (l Limits) ServedModes() []api.Mode {
	if !l.SoftRoCE {
		return l.Modes
	}
	modes := l.Modes
	if len(modes) == 0 {
		modes = api.AttachModes()
	}
	return slices.DeleteFunc(slices.Clone(modes), func(m api.Mode) bool { return m == api.ModeMove })
}

func (l Limits) source() string {
	if l.Source == "" {
		return "config"
	}
	return l.Source
}

// errSoftRoCEMove is why a softRoCE node refuses move mode: the node's
// NICs have no RDMA device, and moving one's netdev into a pod (its rxe
// made on it there) is not yet proven on a real kernel by the rigs, which
// run macvlan, ipvlan and vf; the pod would also take the node's whole
// NIC for an interface a child gives as well.
var errSoftRoCEMove = fmt.Errorf("mode %s is refused on a softRoCE node: moving a NIC's netdev into a pod with an rxe made on it is not supported yet "+
	"(only child interfaces and VFs are proven with softRoCE); use %s, %s or %s", api.ModeMove, api.ModeMacvlan, api.ModeIPVLAN, api.ModeVF)
