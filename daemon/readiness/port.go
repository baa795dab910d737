package readiness

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// port checks the rail's RDMA port: ACTIVE, the link layer it was placed
// with, and for RoCE the GID of each pod address at the index given.
func (c *Checker) port(r Rail) []api.ReadinessCheck {
	target := fmt.Sprintf("%s port %d", r.Device, r.Port)
	state, err := c.ports.State(r.Device, r.Port)
	if errors.Is(err, fs.ErrNotExist) && r.Exclusive {
		// The host's sysfs does not show a device another netns owns.
		return []api.ReadinessCheck{skip(checkPort, r.subject(),
			target+" is not visible from the host (exclusive RDMA netns mode): the rdma-netns check covers the device")}
	}
	if err != nil {
		return []api.ReadinessCheck{fail(checkPort, r.subject(), ReasonPortNotActive, fmt.Sprintf("cannot read the state of %s: %v", target, err),
			"the RDMA device is gone from the node (driver unloaded or reset): check `rdma link` on the node")}
	}
	var out []api.ReadinessCheck
	if state != topology.PortActive {
		out = append(out, fail(checkPort, r.subject(), ReasonPortNotActive, fmt.Sprintf("%s is %s, want %s", target, state, topology.PortActive),
			"check the cable, the switch port and (InfiniBand) the subnet manager: `ibstat "+r.Device+"` on the node"))
	} else {
		out = append(out, pass(checkPort, r.subject(), target+" is "+state))
	}
	ll, err := c.ports.LinkLayer(r.Device, r.Port)
	switch {
	case err != nil:
		out = append(out, fail(checkLinkLayer, r.subject(), ReasonWrongLinkLayer, fmt.Sprintf("cannot read the link layer of %s: %v", target, err), ""))
	case r.LinkLayer != "" && !r.LinkLayer.Matches(ll):
		out = append(out, fail(checkLinkLayer, r.subject(), ReasonWrongLinkLayer,
			fmt.Sprintf("%s is %s, placed as %s", target, ll, r.LinkLayer),
			"the port's link type changed (mlxconfig LINK_TYPE_P"+fmt.Sprint(r.Port)+"): delete the pod so it is placed again"))
	default:
		out = append(out, pass(checkLinkLayer, r.subject(), fmt.Sprintf("%s link layer %s", target, ll)))
	}
	if ll == topology.Ethernet {
		out = append(out, c.gids(r, target)...)
	}
	return out
}

// gids checks that each pod address (a DRA rail's: the one its index was
// worked out from) is a GID of the port, at the index the containers were
// given.
func (c *Checker) gids(r Rail, target string) []api.ReadinessCheck {
	if r.GIDAddress.IsValid() {
		return []api.ReadinessCheck{c.gid(r, target, r.GIDAddress)}
	}
	var out []api.ReadinessCheck
	for _, p := range r.Addresses {
		out = append(out, c.gid(r, target, p.Addr()))
	}
	return out
}

func (c *Checker) gid(r Rail, target string, addr netip.Addr) api.ReadinessCheck {
	fix := "the address's RoCE GID is gone (the address left the netdev, or the netdev changed): `show_gids` on the node; delete the pod so it is placed again"
	if r.GIDIndex < 0 {
		idx, err := c.ports.GIDIndex(r.Device, r.Port, addr)
		if err != nil {
			return fail(checkGID, r.subject(), ReasonGIDMissing, err.Error(), fix)
		}
		return pass(checkGID, r.subject(), fmt.Sprintf("%s holds %s at GID index %d (no index was given to the containers)", target, addr, idx))
	}
	gid, err := c.ports.GID(r.Device, r.Port, r.GIDIndex)
	if err != nil {
		return fail(checkGID, r.subject(), ReasonGIDMissing, fmt.Sprintf("the containers were given GID index %d: %v", r.GIDIndex, err), fix)
	}
	if gid.As16() != addr.As16() && gid.Unmap() != addr.Unmap() {
		msg := fmt.Sprintf("GID index %d of %s holds %s, not the pod's %s", r.GIDIndex, target, gid, addr)
		if idx, err := c.ports.GIDIndex(r.Device, r.Port, addr); err == nil {
			msg += fmt.Sprintf(" (now at index %d)", idx)
			fix = fmt.Sprintf("the GID moved: set NCCL_IB_GID_INDEX=%d in the container, or restart the pod so raild gives it the new index", idx)
		}
		return fail(checkGID, r.subject(), ReasonGIDMissing, msg, fix)
	}
	return pass(checkGID, r.subject(), fmt.Sprintf("%s holds %s at GID index %d, the index the containers were given", target, addr, r.GIDIndex))
}
