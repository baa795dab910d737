package deviceplugin

import (
	"fmt"
	"os"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/pkg/netnstest"
)

// netlinkEvents gives real link events: a veth stand-in for mlx5_0's
// netdev in a netns of the test's own ("rus" prefix) changes state on
// each kick, and the inventory's LinkEvents reads them, as raild does in
// the host netns. The netns and its links go at cleanup, even when the
// test fails.
func netlinkEvents(t *testing.T) (inventory.LinkSource, func(t *testing.T)) {
	t.Helper()
	netnstest.RequireRoot(t, "creates a network namespace")
	ns, h := ownNetns(t, fmt.Sprintf("rus-dp-%d", os.Getpid()))
	events, err := inventory.LinkEvents(ns)
	if err != nil {
		t.Fatal(err)
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: standInNetdev()}, PeerName: fmt.Sprintf("rusdp%db", os.Getpid()%100000)}
	must(t, h.LinkAdd(veth))
	up := false
	return events, func(t *testing.T) {
		t.Helper()
		up = !up
		if up {
			must(t, h.LinkSetUp(veth))
		} else {
			must(t, h.LinkSetDown(veth))
		}
	}
}

// ownNetns makes the named netns and a netlink handle inside it.
func ownNetns(t *testing.T, name string) (netns.NsHandle, *netlink.Handle) {
	t.Helper()
	ns := netnstest.Named(t, name)
	h, err := netlink.NewHandleAt(ns)
	must(t, err)
	t.Cleanup(h.Close)
	return ns, h
}
