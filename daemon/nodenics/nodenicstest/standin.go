// Package nodenicstest gives tests a netns of their own in which veth
// stand-ins carry a fake machine's netdev names, with the addresses and
// routes a test gives them: the host's networking without the host's
// interfaces.
package nodenicstest

import (
	"crypto/rand"
	"fmt"
	"net"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/pkg/netnstest"
)

// StandIn is one netdev to create: a veth named Name (its peer is
// "<n>p"), up, with Addrs (CIDRs) and Routes.
type StandIn struct {
	Name   string
	Addrs  []string
	Routes []Route
}

// Route is a route on a stand-in: Dst "default" or a CIDR, Gw optional.
type Route struct {
	Dst, Gw string
	Table   int
}

// Netns creates a netns of its own holding the stand-ins and returns a
// handle to it; the netns goes at cleanup, with every link in it, even
// when the test fails. It skips the test when not run as root.
func Netns(t testing.TB, standIns ...StandIn) netns.NsHandle {
	t.Helper()
	netnstest.RequireRoot(t, "creates a network namespace")
	ns := netnstest.Named(t, "rp-nn-"+rand.Text()[:12]) // unique beside other tests and tools

	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for i, s := range standIns {
		if err := add(h, s, fmt.Sprintf("rpp%d", i)); err != nil {
			t.Fatalf("stand-in %s: %v", s.Name, err)
		}
	}
	return ns
}

func add(h *netlink.Handle, s StandIn, peer string) error {
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: s.Name}, PeerName: peer}
	if err := h.LinkAdd(veth); err != nil {
		return err
	}
	for _, name := range []string{peer, s.Name} {
		link, err := h.LinkByName(name)
		if err != nil {
			return err
		}
		if err := h.LinkSetUp(link); err != nil {
			return err
		}
	}
	link, err := h.LinkByName(s.Name)
	if err != nil {
		return err
	}
	for _, a := range s.Addrs {
		addr, err := netlink.ParseAddr(a)
		if err != nil {
			return err
		}
		if err := h.AddrAdd(link, addr); err != nil {
			return fmt.Errorf("address %s: %w", a, err)
		}
	}
	for _, r := range s.Routes {
		rt := &netlink.Route{LinkIndex: link.Attrs().Index, Table: r.Table}
		if r.Dst != "default" {
			_, dst, err := net.ParseCIDR(r.Dst)
			if err != nil {
				return err
			}
			rt.Dst = dst
		}
		if r.Gw != "" {
			rt.Gw = net.ParseIP(r.Gw)
		}
		if err := h.RouteAdd(rt); err != nil {
			return fmt.Errorf("route %+v: %w", r, err)
		}
	}
	return nil
}
