package attach

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/netnstest"
)

func moveSpec(parent string) Spec {
	return Spec{Mode: ModeMove, Parent: parent, Name: "rail0", MTU: 9000, Table: 110,
		Addresses: prefixes("10.10.0.5/24"), Routes: []Route{route("10.20.0.0/16", "10.10.0.1")}}
}

func TestMoveDetachAfterRenameInPod(t *testing.T) {
	e := newTestEnv(t)
	s := moveSpec(e.addNIC(1500, true))
	hostBefore := snapshot(t, e.host)
	if _, err := e.attach(s); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	h := handle(t, e.pod)
	l := mustLinkIn(t, e.pod, s.Name)
	if err := h.LinkSetDown(l); err != nil {
		t.Fatal(err)
	}
	if err := h.LinkSetName(l, "renamed0"); err != nil {
		t.Fatalf("rename inside the pod: %v", err)
	}
	if err := e.detach(s); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	if linkIn(t, e.pod, "renamed0") != nil {
		t.Errorf("renamed interface is still in the pod")
	}
	assertSame(t, "host netns", e.host, hostBefore)
	if rules := podRules(t, e, s); rules != 0 {
		t.Errorf("%d source rules left in the pod", rules)
	}
}

// TestMoveDetachAfterPodNetnsDeleted: when a pod netns dies the kernel
// hands a physical netdev back to the host netns under its pod name (or
// "dev<ifindex>" when that name is taken). A veth stand-in would be
// destroyed instead, so the test does the kernel's part: it moves the
// device out the same way, then deletes the pod netns.
func TestMoveDetachAfterPodNetnsDeleted(t *testing.T) {
	tests := []struct {
		name       string
		hostNameOf func(l netlink.Link) string
	}{
		{"returned under its pod name", func(l netlink.Link) string { return l.Attrs().Name }},
		{"returned as dev<ifindex>", func(l netlink.Link) string { return fmt.Sprintf("dev%d", l.Attrs().Index) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			s := moveSpec(e.addNIC(1500, true))
			hostBefore := snapshot(t, e.host)
			if _, err := e.attach(s); err != nil {
				t.Fatalf("Attach: %v", err)
			}
			returned := kernelReturnsToHost(t, e, s.Name, tt.hostNameOf)
			removeTestNetns(e.pod)
			if l := mustLinkIn(t, e.host, returned); !strings.HasPrefix(l.Attrs().Alias, aliasPrefix) {
				t.Fatalf("returned device lost its alias: %q", l.Attrs().Alias)
			}
			if err := e.detach(s); err != nil {
				t.Fatalf("Detach with the pod netns gone: %v", err)
			}
			assertSame(t, "host netns", e.host, hostBefore)
			if err := e.detach(s); err != nil {
				t.Fatalf("second Detach: %v", err)
			}
		})
	}
}

// kernelReturnsToHost moves the pod link back to the host netns without
// restoring anything, the way netns teardown does, and returns its name.
func kernelReturnsToHost(t *testing.T, e *testEnv, podName string, hostNameOf func(netlink.Link) string) string {
	t.Helper()
	l := mustLinkIn(t, e.pod, podName)
	if err := handle(t, e.pod).LinkSetNsFd(l, int(e.host.Fd())); err != nil {
		t.Fatalf("move %s to the host: %v", podName, err)
	}
	l = mustLinkIn(t, e.host, podName)
	name := hostNameOf(l)
	if name != podName {
		if err := handle(t, e.host).LinkSetName(l, name); err != nil {
			t.Fatalf("rename %s to %s: %v", podName, name, err)
		}
	}
	return name
}

// TestDetachWhenVirtualNICDiedWithPod: a virtual device is destroyed with
// its netns; Detach finds nothing and succeeds.
func TestDetachWhenVirtualNICDiedWithPod(t *testing.T) {
	for _, mode := range []Mode{ModeMove, ModeMacvlan} {
		t.Run(string(mode), func(t *testing.T) {
			e := newTestEnv(t)
			s := moveSpec(e.addNIC(1500, true))
			s.Mode, s.MTU = mode, 0
			if _, err := e.attach(s); err != nil {
				t.Fatalf("Attach: %v", err)
			}
			removeTestNetns(e.pod)
			if err := e.detach(s); err != nil {
				t.Fatalf("Detach: %v", err)
			}
		})
	}
}

func TestDetachWithNothingAttached(t *testing.T) {
	tests := []struct {
		name    string
		mode    Mode
		podPath func(e *testEnv) string
	}{
		{"move, empty pod netns", ModeMove, func(e *testEnv) string { return e.pod.Path() }},
		{"macvlan, empty pod netns", ModeMacvlan, func(e *testEnv) string { return e.pod.Path() }},
		{"move, netns path never existed", ModeMove, func(e *testEnv) string { return "/var/run/netns/" + netnstest.UniqueName(t, "gone") }},
		{"ipoib, netns path never existed", ModeIPoIB, func(e *testEnv) string { return "/var/run/netns/" + netnstest.UniqueName(t, "gone") }},
		{"move, path is not a netns", ModeMove, func(e *testEnv) string { return t.TempDir() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			nic := e.addNIC(1500, true)
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
			s := Spec{Mode: tt.mode, Parent: nic, Name: "rail0", Table: 120, Addresses: prefixes("10.10.0.5/24")}
			path := tt.podPath(e)
			if err := e.inHost(func() error { return Detach(path, s) }); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			assertSame(t, "host netns", e.host, hostBefore)
			assertSame(t, "pod netns", e.pod, podBefore)
		})
	}
}

// TestMovePartialMoveRecovered drives the one-message move into the case
// the kernel applies half-way: the pod already has the target name, so the
// device moves but cannot be renamed. (Attach checks the name first; this
// covers the race where the name appears in between.)
func TestMovePartialMoveRecovered(t *testing.T) {
	e := newTestEnv(t)
	nic := e.addNIC(1400, true)
	hostBefore := snapshot(t, e.host)
	e.addPodVeth("rail0")
	podBefore := snapshot(t, e.pod)
	s := Spec{Mode: ModeMove, Parent: nic, Name: "rail0"}
	err := e.inHost(func() error {
		sess, err := openSession(e.pod.Path())
		if err != nil {
			return err
		}
		defer sess.close()
		hostLink, err := sess.hostNL.LinkByName(nic)
		if err != nil {
			return err
		}
		var undo undoList
		return moveIntoPod(sess, hostLink, s, originalState(hostLink, s), &undo)
	})
	if err == nil || !strings.Contains(err.Error(), "file exists") {
		t.Fatalf("moveIntoPod = %v, want the kernel's EEXIST", err)
	}
	assertSame(t, "host netns", e.host, hostBefore)
	assertSame(t, "pod netns", e.pod, podBefore)
}

func TestAttachIsReentrant(t *testing.T) {
	for _, mode := range []Mode{ModeMove, ModeMacvlan} {
		t.Run(string(mode), func(t *testing.T) {
			e := newTestEnv(t)
			s := moveSpec(e.addNIC(9000, true))
			s.Mode = mode
			first, err := e.attach(s)
			if err != nil {
				t.Fatalf("first Attach: %v", err)
			}
			second, err := e.attach(s)
			if err != nil || second != first {
				t.Fatalf("second Attach = %+v, %v; want %+v, nil", second, err, first)
			}
			other := s
			other.Addresses = prefixes("10.10.0.99/24")
			if _, err := e.attach(other); err == nil || !strings.Contains(err.Error(), "detach it first") {
				t.Fatalf("Attach with other addresses = %v, want an 'already attached' error", err)
			}
			if err := e.check(s); err != nil {
				t.Fatalf("the failed Attach changed the interface: %v", err)
			}
		})
	}
}

func podRules(t *testing.T, e *testEnv, s Spec) int {
	t.Helper()
	rules, err := handle(t, e.pod).RuleList(netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range s.Addresses {
		n += countRules(rules, a.Addr(), s.Table)
	}
	return n
}

// TestLateDetachDoesNotStealNIC: pod A dies, the kernel returns the NIC to
// the host under its pod name, pod B attaches it before A's Detach comes.
// B must get it (with the state recorded when it first left the host), and
// A's late Detach must leave B alone.
func TestLateDetachDoesNotStealNIC(t *testing.T) {
	e := newTestEnv(t)
	s := moveSpec(e.addNIC(1500, true))
	hostBefore := snapshot(t, e.host)
	if _, err := e.attach(s); err != nil {
		t.Fatalf("Attach to pod A: %v", err)
	}
	podA := e.pod.Path()
	kernelReturnsToHost(t, e, s.Name, func(l netlink.Link) string { return l.Attrs().Name })
	removeTestNetns(e.pod)

	e.pod = newTestNetns(t) // pod B
	if _, err := e.attach(s); err != nil {
		t.Fatalf("Attach to pod B: %v", err)
	}
	rec, _ := parseAlias(mustLinkIn(t, e.pod, s.Name).Attrs().Alias)
	if rec.MTU != 1500 || !rec.Up {
		t.Errorf("pod B alias records mtu %d up %v, want the original 1500 and up", rec.MTU, rec.Up)
	}
	if err := e.inHost(func() error { return Detach(podA, s) }); err != nil {
		t.Fatalf("late Detach for pod A: %v", err)
	}
	if err := e.check(s); err != nil {
		t.Fatalf("pod B lost its NIC to a late Detach: %v", err)
	}
	if err := e.detach(s); err != nil {
		t.Fatalf("Detach for pod B: %v", err)
	}
	assertSame(t, "host netns", e.host, hostBefore)
}
