package readiness

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/nsfs"
)

// inPod checks, through a netlink handle opened in the pod's netns, that
// the interface is there, up, and holds its lease addresses.
func (c *Checker) inPod(r Rail) []api.ReadinessCheck {
	ns, err := nsfs.Open(r.Netns)
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
	link, err := findLink(h, r)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		msg := fmt.Sprintf("%s is not in the pod's netns %s", r.IfName, r.Netns)
		if !errors.As(err, &notFound) {
			msg = fmt.Sprintf("cannot read %s in the pod's netns %s: %v", r.IfName, r.Netns, err)
		}
		fix := "the NIC left the pod (a driver reset, or another plugin or tool took it): delete the pod so it is placed again"
		if r.DRA != nil {
			fix = fmt.Sprintf("the %s driver did not move the NIC of claim %s into the pod, or it left since: "+
				"check the driver's logs and the claim's status (kubectl get resourceclaim -o yaml)", r.DRA.Driver, r.DRA.Claim)
		}
		return []api.ReadinessCheck{fail(checkInterface, r.IfName, ReasonIfaceMissing, msg, fix)}
	}
	out := []api.ReadinessCheck{linkUp(r.IfName, link.Attrs())}
	return append(out, c.addresses(h, link, r))
}

// findLink finds the rail's interface in the pod by its name; a DRA rail's,
// when the pod knows it under another name (a claim that renamed it), by
// its PCI function (the one link whose parent device it is).
func findLink(h *netlink.Handle, r Rail) (netlink.Link, error) {
	link, err := h.LinkByName(r.IfName)
	var notFound netlink.LinkNotFoundError
	if err == nil || r.PCI == "" || !errors.As(err, &notFound) {
		return link, err
	}
	links, lerr := h.LinkList()
	if lerr != nil {
		return nil, err
	}
	if l, ok := linkOfPCI(links, r.PCI); ok {
		return l, nil
	}
	return nil, err
}

// linkOfPCI is the one link whose parent device is the PCI function (two
// or more, a function with a netdev per port: none, the name must tell).
func linkOfPCI(links []netlink.Link, pci string) (netlink.Link, bool) {
	var found netlink.Link
	for _, l := range links {
		a := l.Attrs()
		if (a.ParentDevBus != "" && a.ParentDevBus != "pci") || !strings.EqualFold(a.ParentDev, pci) {
			continue
		}
		if found != nil {
			return nil, false
		}
		found = l
	}
	return found, found != nil
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
		if !holdsAddress(have, want, r.Match) {
			missing = append(missing, AddressText(want, r.Match))
		}
	}
	if len(missing) > 0 {
		what, fix := "its lease address", "something in the pod removed it: delete the pod to get it back"
		if r.DRA != nil {
			what = "the address the " + r.DRA.Driver + " driver's ResourceSlice lists"
			fix = "the driver moved the NIC without it, or something in the pod removed it: check the claim's status and the driver's logs"
		}
		return fail(checkAddress, r.IfName, ReasonAddressMissing,
			fmt.Sprintf("%s lacks %s %s", r.IfName, what, strings.Join(missing, ", ")), fix)
	}
	if len(r.Addresses) == 0 {
		return skip(checkAddress, r.IfName, r.IfName+": no address to look for (the driver's slice lists none)")
	}
	return pass(checkAddress, r.IfName, fmt.Sprintf("%s holds %s", r.IfName, joinAddresses(r.Addresses, r.Match)))
}

// holdsAddress: the interface holds want, compared as m says.
func holdsAddress(have []netip.Prefix, want netip.Prefix, m AddressMatch) bool {
	for _, p := range have {
		if p.Addr() == want.Addr().Unmap() && (m == MatchAddressOnly || p.Bits() == want.Bits()) {
			return true
		}
	}
	return false
}

// AddressText is an address as the checks and doctor print it: with its
// prefix length when that is known.
func AddressText(p netip.Prefix, m AddressMatch) string {
	if m == MatchAddressOnly {
		return p.Addr().String()
	}
	return p.String()
}

func joinAddresses(ps []netip.Prefix, m AddressMatch) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = AddressText(p, m)
	}
	return strings.Join(s, ", ")
}
