package harness

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vishvananda/netlink"
)

// netnsTeardownTimeout bounds the wait for a stand-in's fabric peer to
// go once the stand-in was deleted (DeleteNetns deletes it before the
// namespace, so this is at once). A hang guard, not a speed claim.
const netnsTeardownTimeout = 60 * time.Second

// DeleteNetns deletes a namespace (one that is gone is fine) and refunds
// the stand-in NICs that were inside, as the kernel refunds physical NICs
// (see refund). The stand-ins inside are deleted first, so their fabric
// peers go at once: the kernel destroys a deleted namespace's links
// asynchronously, in one queue for the whole machine, which fell a minute
// behind while other packages churned namespaces in CI.
func (f *Fabric) DeleteNetns(netns *NetNS) error {
	if !netns.Exists() {
		return nil
	}
	inside, err := f.standInsIn(netns)
	if err != nil {
		return err
	}
	if err := deleteLinks(netns, inside); err != nil {
		return err
	}
	if err := netns.Delete(); err != nil {
		return err
	}
	var errs []error
	for _, s := range inside {
		errs = append(errs, f.refund(s))
	}
	return errors.Join(errs...)
}

// podStandIn is a stand-in NIC found inside a pod netns, as it was there.
type podStandIn struct {
	nic   *StandIn
	index int
	name  string
	alias string
	mtu   int
}

// deleteLinks deletes the stand-ins found inside netns (a veth's deletion
// takes its peer with it, synchronously).
func deleteLinks(netns *NetNS, inside []podStandIn) error {
	if len(inside) == 0 {
		return nil
	}
	h, err := netns.Netlink()
	if err != nil {
		return err
	}
	defer h.Close()
	for _, p := range inside {
		link, err := h.LinkByIndex(p.index)
		if err != nil {
			return fmt.Errorf("stand-in %s in %s: %w", p.name, netns.Name, err)
		}
		if err := h.LinkDel(link); err != nil {
			return fmt.Errorf("delete stand-in %s in %s: %w", p.name, netns.Name, err)
		}
	}
	return nil
}

// standInsIn lists the stand-in NICs that sit inside netns (found by MAC,
// whatever they are called there).
func (f *Fabric) standInsIn(netns *NetNS) ([]podStandIn, error) {
	h, err := netns.Netlink()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links in %s: %w", netns.Name, err)
	}
	var out []podStandIn
	for _, l := range links {
		attrs := l.Attrs()
		if s, ok := f.ByMAC(attrs.HardwareAddr); ok && l.Type() == "veth" {
			out = append(out, podStandIn{nic: s, index: attrs.Index, name: attrs.Name, alias: attrs.Alias, mtu: attrs.MTU})
		}
	}
	return out, nil
}

// refund stands in for what the kernel does with a physical NIC whose
// netns is destroyed: it returns to the host netns, down, under the name
// it had in the pod (or dev<ifindex> when that name is taken), keeping its
// alias and MTU. The kernel destroys a veth instead, so once the old pair
// is gone the harness recreates it that way (same MAC, same fabric peer).
func (f *Fabric) refund(p podStandIn) error {
	if err := f.waitPeerGone(p.nic, netnsTeardownTimeout); err != nil {
		return err
	}
	name, err := f.freeName(p.name)
	if err != nil {
		return err
	}
	if _, err := f.create(p.nic, name, p.alias, p.mtu, false, p.nic.MAC); err != nil {
		return fmt.Errorf("refund stand-in %s as %s: %w", p.nic.Name, name, err)
	}
	return nil
}

// freeName is name when the node netns does not use it, else a dev<N>
// name as the kernel picks on a clash.
func (f *Fabric) freeName(name string) (string, error) {
	h, err := f.node.Netlink()
	if err != nil {
		return "", err
	}
	defer h.Close()
	if _, err := h.LinkByName(name); err != nil {
		return name, nil
	}
	for i := 100; i < 10000; i++ {
		candidate := fmt.Sprintf("dev%d", i)
		if _, err := h.LinkByName(candidate); err != nil {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("no free name for a refunded %s", name)
}

// Present reports whether each stand-in is in the node netns under its
// own name, MTU and state, returning what differs.
func (f *Fabric) Present() []string {
	return f.PresentExcept(nil)
}

// PresentExcept is Present for every stand-in whose RDMA device is not in
// away (NICs that are meant to sit inside pods right now).
func (f *Fabric) PresentExcept(away map[string]bool) []string {
	h, err := f.node.Netlink()
	if err != nil {
		return []string{err.Error()}
	}
	defer h.Close()
	var problems []string
	for _, s := range f.nics {
		if away[s.RDMA] {
			continue
		}
		link, err := h.LinkByName(s.Name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("stand-in %s (%s) is not in the node netns: %v", s.Name, s.RDMA, err))
			continue
		}
		problems = append(problems, s.differences(link)...)
	}
	return problems
}

func (s *StandIn) differences(link netlink.Link) []string {
	attrs := link.Attrs()
	var out []string
	if attrs.HardwareAddr.String() != s.MAC.String() {
		out = append(out, fmt.Sprintf("%s: MAC %s, want %s", s.Name, attrs.HardwareAddr, s.MAC))
	}
	if attrs.MTU != s.MTU {
		out = append(out, fmt.Sprintf("%s: MTU %d, want %d", s.Name, attrs.MTU, s.MTU))
	}
	if up := attrs.Flags&net.FlagUp != 0; up != s.Up {
		out = append(out, fmt.Sprintf("%s: up=%v, want up=%v", s.Name, up, s.Up))
	}
	if attrs.Alias != "" {
		out = append(out, fmt.Sprintf("%s: alias %q left behind", s.Name, attrs.Alias))
	}
	return out
}
