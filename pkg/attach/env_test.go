package attach

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/pkg/netnstest"
)

// testEnv is a throwaway node: a "host" netns standing in for the host
// (Attach runs with its thread inside it), a "pod" netns, and a "wire"
// netns holding the far ends of the veth pairs that stand in for NICs.
// Nothing touches the real host netns.
type testEnv struct {
	t    testing.TB
	host ns.NetNS
	pod  ns.NetNS
	wire ns.NetNS
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	netnstest.RequireRoot(t, "creates network namespaces")
	return &testEnv{t: t, host: newTestNetns(t), pod: newTestNetns(t), wire: newTestNetns(t)}
}

// newTestNetns creates a named netns that is removed when the test ends.
func newTestNetns(t testing.TB) ns.NetNS {
	t.Helper()
	n, err := testutils.NewNS()
	if err != nil {
		t.Fatalf("create netns: %v", err)
	}
	t.Cleanup(func() { removeTestNetns(n) })
	return n
}

// removeTestNetns closes and unmounts n; a second call is harmless.
func removeTestNetns(n ns.NetNS) {
	_ = n.Close()
	_ = testutils.UnmountNS(n)
}

// handle opens a netlink handle in n, closed at the end of the test.
func handle(t testing.TB, n ns.NetNS) *netlink.Handle {
	t.Helper()
	h, err := netlink.NewHandleAt(netns.NsHandle(int(n.Fd())))
	if err != nil {
		t.Fatalf("netlink handle in %s: %v", n.Path(), err)
	}
	t.Cleanup(h.Close)
	return h
}

// addNIC creates a stand-in NIC in the host netns: one end of a veth pair
// whose other end lives in the wire netns.
func (e *testEnv) addNIC(mtu int, up bool) string {
	e.t.Helper()
	name := netnstest.UniqueName(e.t, "nic")
	attrs := netlink.NewLinkAttrs()
	attrs.Name = name
	attrs.MTU = mtu
	veth := &netlink.Veth{LinkAttrs: attrs, PeerName: netnstest.UniqueName(e.t, "wire"), PeerNamespace: netlink.NsFd(int(e.wire.Fd()))}
	h := handle(e.t, e.host)
	if err := h.LinkAdd(veth); err != nil {
		e.t.Fatalf("create stand-in NIC %s: %v", name, err)
	}
	if up {
		if err := h.LinkSetUp(veth); err != nil {
			e.t.Fatalf("set %s up: %v", name, err)
		}
	}
	return name
}

// addPodVeth creates an interface called name in the pod, e.g. to take a
// name rail wants.
func (e *testEnv) addPodVeth(name string) {
	e.t.Helper()
	attrs := netlink.NewLinkAttrs()
	attrs.Name = name
	veth := &netlink.Veth{LinkAttrs: attrs, PeerName: netnstest.UniqueName(e.t, "pp")}
	if err := handle(e.t, e.pod).LinkAdd(veth); err != nil {
		e.t.Fatalf("create pod veth %s: %v", name, err)
	}
}

// inHost runs f on a thread inside the host netns, as the plugin runs.
func (e *testEnv) inHost(f func() error) error {
	e.t.Helper()
	var ferr error
	if err := e.host.Do(func(ns.NetNS) error { ferr = f(); return nil }); err != nil {
		e.t.Fatalf("enter host netns: %v", err)
	}
	return ferr
}

func (e *testEnv) attach(s Spec) (Result, error) {
	var res Result
	err := e.inHost(func() error {
		got, err := AttachAll(e.pod.Path(), []Spec{s})
		if err == nil {
			res = got[0].Result
		}
		return err
	})
	return res, err
}

func (e *testEnv) detach(s Spec) error {
	return e.inHost(func() error { return Detach(e.pod.Path(), s) })
}

func (e *testEnv) check(s Spec) error {
	return e.inHost(func() error { return Check(e.pod.Path(), s) })
}

// linkIn returns the link called name in n, or nil.
func linkIn(t testing.TB, n ns.NetNS, name string) netlink.Link {
	t.Helper()
	l, err := handle(t, n).LinkByName(name)
	if err != nil {
		if _, ok := err.(netlink.LinkNotFoundError); ok {
			return nil
		}
		t.Fatalf("look up %s in %s: %v", name, n.Path(), err)
	}
	return l
}

func mustLinkIn(t testing.TB, n ns.NetNS, name string) netlink.Link {
	t.Helper()
	l := linkIn(t, n, name)
	if l == nil {
		t.Fatalf("link %s not found in %s", name, n.Path())
	}
	return l
}

func isUp(l netlink.Link) bool { return l.Attrs().Flags&net.FlagUp != 0 }

// readSysctl reads a /proc/sys file from inside n.
func readSysctl(t testing.TB, n ns.NetNS, path string) string {
	t.Helper()
	var out string
	err := n.Do(func(ns.NetNS) error {
		b, err := os.ReadFile(path)
		out = strings.TrimSpace(string(b))
		return err
	})
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return out
}
