package readiness

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/pkg/api"
)

// inPod checks, through a netlink handle opened in the pod's netns, that
// the interface is there, up, and holds its lease addresses.
func (c *Checker) inPod(r Rail) []api.ReadinessCheck {
	ns, err := netns.GetFromPath(r.Netns)
	if err != nil {
		return []api.ReadinessCheck{fail(checkInterface, r.IfName, ReasonNetnsGone,
			fmt.Sprintf("cannot open the pod's netns %s: %v", r.Netns, err),
			"the sandbox is gone or raild cannot see the runtime's netns dir (mount it into raild's pod)")}
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return []api.ReadinessCheck{fail(checkInterface, r.IfName, ReasonNetnsGone,
			fmt.Sprintf("cannot open netlink in the pod's netns %s: %v", r.Netns, err), "raild needs CAP_NET_ADMIN and CAP_SYS_ADMIN")}
	}
	defer h.Close()
	link, err := h.LinkByName(r.IfName)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		msg := fmt.Sprintf("%s is not in the pod's netns %s", r.IfName, r.Netns)
		if !errors.As(err, &notFound) {
			msg = fmt.Sprintf("cannot read %s in the pod's netns %s: %v", r.IfName, r.Netns, err)
		}
		return []api.ReadinessCheck{fail(checkInterface, r.IfName, ReasonIfaceMissing, msg,
			"the NIC left the pod (a driver reset, or another plugin or tool took it): delete the pod so it is placed again")}
	}
	out := []api.ReadinessCheck{linkUp(r.IfName, link.Attrs())}
	return append(out, c.addresses(h, link, r))
}

// linkUp passes an interface that is administratively up and whose
// operational state does not say down.
func linkUp(name string, a *netlink.LinkAttrs) api.ReadinessCheck {
	switch {
	case a.Flags&net.FlagUp == 0:
		return fail(checkInterface, name, ReasonIfaceDown, fmt.Sprintf("%s is administratively down in the pod", name),
			"something in the pod set it down (ip link set "+name+" up, or delete the pod)")
	case a.OperState == netlink.OperDown || a.OperState == netlink.OperLowerLayerDown || a.OperState == netlink.OperNotPresent:
		return fail(checkInterface, name, ReasonIfaceDown, fmt.Sprintf("%s is up but its link is %s", name, a.OperState),
			"check the NIC's link on the node: cable, switch port, the parent netdev of a macvlan/IPoIB child")
	}
	return pass(checkInterface, name, fmt.Sprintf("%s is in the pod and up (%s)", name, a.OperState))
}

// addresses checks that the interface holds every lease address.
func (c *Checker) addresses(h *netlink.Handle, link netlink.Link, r Rail) api.ReadinessCheck {
	addrs, err := h.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		return fail(checkAddress, r.IfName, ReasonAddressMissing, fmt.Sprintf("cannot list %s's addresses: %v", r.IfName, err), "")
	}
	have := make([]netip.Prefix, 0, len(addrs))
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			ones, _ := a.Mask.Size()
			have = append(have, netip.PrefixFrom(ip.Unmap(), ones))
		}
	}
	var missing []string
	for _, want := range r.Addresses {
		if !holdsPrefix(have, want) {
			missing = append(missing, want.String())
		}
	}
	if len(missing) > 0 {
		return fail(checkAddress, r.IfName, ReasonAddressMissing,
			fmt.Sprintf("%s lacks its lease address %s", r.IfName, strings.Join(missing, ", ")),
			"something in the pod removed it: delete the pod to get it back")
	}
	return pass(checkAddress, r.IfName, fmt.Sprintf("%s holds %s", r.IfName, joinPrefixes(r.Addresses)))
}

func holdsPrefix(have []netip.Prefix, want netip.Prefix) bool {
	for _, p := range have {
		if p.Addr() == want.Addr().Unmap() && p.Bits() == want.Bits() {
			return true
		}
	}
	return false
}

func joinPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
