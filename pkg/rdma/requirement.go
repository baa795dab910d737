package rdma

import (
	"fmt"

	"github.com/railcni/rail/pkg/api"
)

// ModeRequirement reports whether attachMode can give a pod working RDMA
// while the RDMA subsystem is in netns mode m.
//
//   - "move" and "vf" work in both modes (in exclusive mode the RDMA device has to
//     move with the netdev, see MoveDevice).
//   - "macvlan", "ipvlan" and "ipoib" create child netdevs whose RDMA traffic goes
//     through the parent's RDMA device, which a pod only sees in shared mode.
//
// With NetnsNone (no RDMA subsystem) there is no netns constraint and the
// result is nil; whether RDMA is needed at all is for the caller to decide.
// The error for a mismatch says which mode is set, which is needed and how
// to change it.
func ModeRequirement(attachMode api.Mode, m NetnsMode) error {
	if _, err := ParseNetnsMode(string(m)); err != nil {
		return err
	}
	switch attachMode {
	case api.ModeMove, api.ModeVF:
		return nil
	case api.ModeMacvlan, api.ModeIPVLAN, api.ModeIPoIB:
		if m != NetnsExclusive {
			return nil
		}
		return fmt.Errorf("attach mode %q needs the RDMA subsystem in %q netns mode, but it is in %q mode: "+
			"switch it with `rdma system set netns shared` before any network namespace other than the host's exists, "+
			"or at boot with the ib_core module parameter netns_mode=1; or use attach mode %q, which works in both modes",
			attachMode, NetnsShared, NetnsExclusive, api.ModeMove)
	default:
		return fmt.Errorf("unknown attach mode %q: want one of %s", attachMode, api.ModeList(api.AttachModes()))
	}
}
