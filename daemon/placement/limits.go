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
	// (softRoCEMove).
	SoftRoCE bool
}

// checkMode refuses a mode the node does not serve.
func (l Limits) checkMode(mode api.Mode) error {
	if l.SoftRoCE && mode == api.ModeMove {
		return softRoCEMove
	}
	if len(l.Modes) == 0 || slices.Contains(l.Modes, mode) {
		return nil
	}
	return fmt.Errorf("mode %s is not served on this node (%s modes: %s): use one of those, or a network for another node class",
		mode, l.source(), api.ModeList(l.Modes))
}

func (l Limits) source() string {
	if l.Source == "" {
		return "config"
	}
	return l.Source
}

// softRoCEMove is why a softRoCE node refuses move mode: its ports are rxe
// devices standing in for NICs, and the kernel destroys an rxe whose
// netdev leaves its netns, so the node would lose the port for good.
var softRoCEMove = fmt.Errorf("mode %s is refused on a softRoCE node: moving the netdev would destroy the rxe that stands in for its port "+
	"(the kernel unregisters an rxe whose netdev leaves its netns); use %s, %s or %s", api.ModeMove, api.ModeMacvlan, api.ModeIPVLAN, api.ModeVF)
