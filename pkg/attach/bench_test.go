package attach

import (
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Both move benchmarks do one round trip per iteration: the stand-in NIC
// goes into the pod renamed to rail0 with an alias and MTU 9000, and back
// under its own name with the alias cleared and MTU 1500.

// BenchmarkMoveOneMessage: one RTM_NEWLINK each way (what Attach and
// Detach send).
func BenchmarkMoveOneMessage(b *testing.B) {
	e := newTestEnv(b)
	nic := e.addNIC(1500, true)
	hostSock := benchSocket(b, netns.NsHandle(int(e.host.Fd())))
	podSock := benchSocket(b, netns.NsHandle(int(e.pod.Fd())))
	index := mustLinkIn(b, e.host, nic).Attrs().Index
	alias := aliasRecord{Host: nic, Name: "rail0", MTU: 1500, Up: true}.String()
	in := linkChange{Index: index, NetnsFd: int(e.pod.Fd()), Name: "rail0", Alias: &alias, MTU: 9000}
	out := linkChange{Index: index, NetnsFd: int(e.host.Fd()), Name: nic, Alias: ptr(""), MTU: 1500}
	for b.Loop() {
		if err := hostSock.changeLink(in); err != nil {
			b.Fatalf("move in: %v", err)
		}
		if err := podSock.changeLink(out); err != nil {
			b.Fatalf("move out (ifindex %d kept?): %v", index, err)
		}
	}
	if l := mustLinkIn(b, e.host, nic); l.Attrs().Alias != "" || l.Attrs().MTU != 1500 {
		b.Fatalf("NIC not restored: %+v", l.Attrs())
	}
}

// BenchmarkMoveViaTempNetns: the temporary-netns approach (move into a
// fresh netns, rename, set alias and MTU there, move on), each way.
func BenchmarkMoveViaTempNetns(b *testing.B) {
	e := newTestEnv(b)
	nic := e.addNIC(1500, true)
	hostH, podH := handle(b, e.host), handle(b, e.pod)
	alias := aliasRecord{Host: nic, Name: "rail0", MTU: 1500, Up: true}.String()
	for b.Loop() {
		link, err := hostH.LinkByName(nic)
		if err != nil {
			b.Fatal(err)
		}
		viaTempNetns(b, hostH, link, nic, "rail0", alias, 9000, int(e.pod.Fd()))
		link, err = podH.LinkByName("rail0")
		if err != nil {
			b.Fatal(err)
		}
		viaTempNetns(b, podH, link, "rail0", nic, "", 1500, int(e.host.Fd()))
	}
	if l := mustLinkIn(b, e.host, nic); l.Attrs().Alias != "" || l.Attrs().MTU != 1500 {
		b.Fatalf("NIC not restored: %+v", l.Attrs())
	}
}

// viaTempNetns moves link (called name, seen by from) through a fresh
// netns where it gets its new name, alias and MTU, then on to targetFd.
func viaTempNetns(b *testing.B, from *netlink.Handle, link netlink.Link, name, newName, alias string, mtu, targetFd int) {
	b.Helper()
	tmp, err := ns.TempNetNS()
	if err != nil {
		b.Fatalf("temp netns: %v", err)
	}
	defer tmp.Close()
	if err := from.LinkSetNsFd(link, int(tmp.Fd())); err != nil {
		b.Fatalf("move to temp netns: %v", err)
	}
	th, err := netlink.NewHandleAt(netns.NsHandle(int(tmp.Fd())))
	if err != nil {
		b.Fatal(err)
	}
	defer th.Close()
	l, err := th.LinkByName(name)
	if err != nil {
		b.Fatal(err)
	}
	for _, step := range []func() error{
		func() error { return th.LinkSetName(l, newName) },
		func() error { return th.LinkSetAlias(l, alias) },
		func() error { return th.LinkSetMTU(l, mtu) },
		func() error { return th.LinkSetNsFd(l, targetFd) },
	} {
		if err := step(); err != nil {
			b.Fatalf("temp netns step: %v", err)
		}
	}
}

// BenchmarkAttachDetachMove: the public API end to end, move mode, one
// address and one route, policy table.
func BenchmarkAttachDetachMove(b *testing.B) {
	benchAttachDetach(b, ModeMove)
}

// BenchmarkAttachDetachMacvlan: the same in macvlan mode.
func BenchmarkAttachDetachMacvlan(b *testing.B) {
	benchAttachDetach(b, ModeMacvlan)
}

func benchAttachDetach(b *testing.B, mode Mode) {
	e := newTestEnv(b)
	s := Spec{Mode: mode, Parent: e.addNIC(1500, true), Name: "rail0", Table: 160,
		Addresses: prefixes("10.10.0.5/24"), Routes: []Route{route("10.20.0.0/16", "10.10.0.1")}}
	err := e.inHost(func() error {
		for b.Loop() {
			if _, err := AttachAll(e.pod.Path(), []Spec{s}); err != nil {
				return err
			}
			if err := Detach(e.pod.Path(), s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func benchSocket(b *testing.B, at netns.NsHandle) *routeSocket {
	b.Helper()
	s, err := openRouteSocket(at)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.close)
	return s
}
