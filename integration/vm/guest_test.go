// Package vm holds Rail's tests that need a kernel with RDMA: they run
// inside the throw-away QEMU guest that run.sh boots (Debian's kernel with
// rdma_rxe, Soft-RoCE), as root, in the guest's own initial network
// namespace. Outside that guest every test skips, so `go test ./...` on a
// build host without RDMA compiles them and moves on.
//
// run.sh boots the guest twice and says which boot this is in
// RAIL_VM_BOOT: "shared" (ib_core's default RDMA netns mode) or
// "exclusive" (booted with ib_core.netns_mode=0). Tests that need one mode
// skip in the other boot.
package vm

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/rdma"
)

// guestBoot returns the RDMA netns mode this boot of the guest was set up
// for, and skips the test outside the guest.
func guestBoot(t *testing.T) rdma.NetnsMode {
	t.Helper()
	if os.Getenv("RAIL_VM_GUEST") != "1" {
		t.Skip("runs inside the RDMA guest only: sudo integration/vm/run.sh")
	}
	mode, err := rdma.ParseNetnsMode(os.Getenv("RAIL_VM_BOOT"))
	if err != nil || mode == rdma.NetnsNone {
		t.Fatalf("RAIL_VM_BOOT=%q: want shared or exclusive (set by run.sh)", os.Getenv("RAIL_VM_BOOT"))
	}
	return mode
}

// requireBoot skips the test unless this is the boot in netns mode want.
func requireBoot(t *testing.T, want rdma.NetnsMode) {
	t.Helper()
	if got := guestBoot(t); got != want {
		t.Skipf("needs the %s boot (this is the %s boot; run.sh runs both)", want, got)
	}
}

// newNetns creates a network namespace removed when the test ends.
func newNetns(t *testing.T) ns.NetNS {
	t.Helper()
	n, err := testutils.NewNS()
	if err != nil {
		t.Fatalf("create netns: %v", err)
	}
	t.Cleanup(func() {
		_ = n.Close()
		_ = testutils.UnmountNS(n)
	})
	return n
}

// useGuestNIC returns the guest's virtio NIC (RAIL_VM_NIC, found by
// run.sh's job): a PCI netdev that, unlike a veth, the kernel hands back to
// the initial netns when a netns holding it dies, as with a real NIC. It
// is set up, and its MTU is put back when the test ends.
func useGuestNIC(t *testing.T) string {
	t.Helper()
	name := os.Getenv("RAIL_VM_NIC")
	if name == "" {
		t.Fatal("RAIL_VM_NIC is not set: run the tests with integration/vm/run.sh")
	}
	link, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatalf("the guest NIC %s is not in the guest netns (did an earlier test leave it elsewhere?): %v", name, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		t.Fatalf("set %s up: %v", name, err)
	}
	mtu := link.Attrs().MTU
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(name); err == nil {
			_ = netlink.LinkSetMTU(l, mtu)
		}
	})
	return name
}

// rdmaHandle opens an RDMA netlink handle inside n (nil: the guest's
// initial netns, where the test runs), closed with the test. An open
// handle keeps its netns alive: close it early to see the netns die.
func rdmaHandle(t *testing.T, n ns.NetNS) *netlink.Handle {
	t.Helper()
	target := netns.None()
	if n != nil {
		target = netns.NsHandle(int(n.Fd()))
	}
	h, err := netlink.NewHandleAt(target, unix.NETLINK_RDMA)
	if err != nil {
		t.Fatalf("rdma netlink handle: %v", err)
	}
	t.Cleanup(h.Close)
	return h
}

// addVethPair creates a veth pair in the guest's initial netns with both
// ends up (an rxe port is ACTIVE only on a netdev with carrier) and
// returns the two names; the pair is deleted when the test ends.
func addVethPair(t *testing.T) (string, string) {
	t.Helper()
	a, b := netnstest.UniqueName(t, "rva"), netnstest.UniqueName(t, "rvb")
	attrs := netlink.NewLinkAttrs()
	attrs.Name = a
	veth := &netlink.Veth{LinkAttrs: attrs, PeerName: b}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatalf("create veth %s/%s: %v", a, b, err)
	}
	t.Cleanup(func() { _ = netlink.LinkDel(veth) })
	for _, name := range []string{a, b} {
		link, err := netlink.LinkByName(name)
		if err != nil {
			t.Fatalf("find %s: %v", name, err)
		}
		if err := netlink.LinkSetUp(link); err != nil {
			t.Fatalf("set %s up: %v", name, err)
		}
	}
	return a, b
}

// addRxe creates the Soft-RoCE device name on netdev through h (whose
// netns is where the device is born) and deletes it when the test ends,
// wherever it is by then.
func addRxe(t *testing.T, h *netlink.Handle, name, netdev string) {
	t.Helper()
	if err := h.RdmaLinkAdd(name, "rxe", netdev); err != nil {
		t.Fatalf("rdma link add %s type rxe netdev %s: %v", name, netdev, err)
	}
	t.Cleanup(func() { _ = h.RdmaLinkDel(name) })
}

// rdmaDevices lists the RDMA device names h's netns sees.
func rdmaDevices(t *testing.T, h *netlink.Handle) []string {
	t.Helper()
	links, err := h.RdmaLinkList()
	if err != nil {
		t.Fatalf("list rdma devices: %v", err)
	}
	names := make([]string, 0, len(links))
	for _, l := range links {
		names = append(names, l.Attrs.Name)
	}
	return names
}

// waitFor polls cond until it holds or a generous bound passes, for
// kernel work that completes asynchronously (a dying netns handing its
// devices back) and daemons starting under TCG on a loaded host. It is a
// bound on waiting, not a speed assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	const bound = 2 * time.Minute
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after %v for %s", bound, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// isNotFound reports whether err is netlink's "no such link".
func isNotFound(err error) bool {
	var notFound netlink.LinkNotFoundError
	return errors.As(err, &notFound)
}
