package inventory

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// testNetns makes a named netns of its own ("ry" prefix) and returns a
// handle to it and a netlink handle inside it; both go at cleanup, with
// every link in it, even when the test fails.
func testNetns(t testing.TB) (netns.NsHandle, *netlink.Handle) {
	t.Helper()
	return namedNetns(t, fmt.Sprintf("ry-inv-%d", os.Getpid()))
}

// namedNetns is testNetns under a name of the caller's ("ry" prefix).
func namedNetns(t testing.TB, name string) (netns.NsHandle, *netlink.Handle) {
	t.Helper()
	netnstest.RequireRoot(t, "creates a network namespace")
	ns := netnstest.Named(t, name)
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return ns, h
}

// watching starts an inventory of the machine at root that runs w on the
// link events of ns, until the test ends.
func watching(t testing.TB, ns netns.NsHandle, root string, w Watch) *Inventory {
	t.Helper()
	inv, err := New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	runWatch(t, inv, ns, w)
	return inv
}

// runWatch runs w on the link events of ns until the test ends.
func runWatch(t testing.TB, inv *Inventory, ns netns.NsHandle, w Watch) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	events, err := LinkEvents(ns)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w.Events = events
	done := make(chan struct{})
	go func() {
		defer close(done)
		inv.Run(ctx, w)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// waitFor returns the first published snapshot that satisfies ok.
func waitFor(t *testing.T, published <-chan *Snapshot, what string, ok func(*Snapshot) bool) *Snapshot {
	t.Helper()
	deadline := time.After(20 * time.Second) // a hang guard, not a speed claim
	for {
		select {
		case s := <-published:
			if ok(s) {
				return s
			}
		case <-deadline:
			t.Fatalf("no snapshot with %s", what)
			return nil
		}
	}
}

// TestRunFollowsLinkEvents: with no rescan timer, link events alone (a
// veth standing in for mlx5_1's netdev really created, going down, up,
// renamed, deleted) make the inventory read mlx5_1 again, and each
// snapshot shows its files as they are; the events of the veth's peer,
// no NIC's netdev, are ignored (its state changes dropped by the kernel
// filter).
func TestRunFollowsLinkEvents(t *testing.T) {
	ns, h := testNetns(t)
	base := fmt.Sprintf("ryinv%d", os.Getpid()%100000)
	root, _ := fakeNode(t, fakesys.Options{Netdevs: map[string]string{"mlx5_1": base + "a"}})
	published := make(chan *Snapshot, 16)
	inv := watching(t, ns, root, Watch{Settle: 20 * time.Millisecond, Published: func(s *Snapshot) { published <- s }})

	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: base + "a"}, PeerName: base + "b"}
	steps := []struct {
		name  string
		state string
		link  func() error
	}{
		{"created", "DOWN", func() error { return h.LinkAdd(veth) }},
		{"port up", "ACTIVE", func() error { return h.LinkSetUp(veth) }},
		{"port down", "DOWN", func() error { return h.LinkSetDown(veth) }},
		{"renamed on the host", "ACTIVE", func() error { return h.LinkSetName(veth, base+"r") }},
		{"removed", "DOWN", func() error { return h.LinkDel(veth) }},
	}
	for _, step := range steps {
		must(t, fakesys.SetPortState(root, "mlx5_1", 1, step.state))
		before := inv.Current().Version
		must(t, step.link())
		s := waitFor(t, published, step.name, func(s *Snapshot) bool {
			nic, _ := s.Machine.NICByName("mlx5_1")
			return s.Version > before && nic.State == step.state
		})
		if !strings.HasPrefix(s.Cause, "link event") {
			t.Errorf("%s: snapshot %d caused by %q, want a link event", step.name, s.Version, s.Cause)
		}
	}
	stats := inv.Stats()
	if stats.FullRescans != 1 || stats.Events-stats.Ignored > stats.nicReads() {
		t.Errorf("stats %+v: want only the first full rescan, and the peer's events ignored (or dropped by the kernel)", stats)
	}
}

// TestRunRescansOnTimer: without events the timer alone picks up a change.
func TestRunRescansOnTimer(t *testing.T) {
	root, _ := fakeNode(t, fakesys.Options{})
	inv, err := New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	published := make(chan *Snapshot, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		inv.Run(ctx, Watch{Interval: 10 * time.Millisecond, Published: func(s *Snapshot) {
			select {
			case published <- s:
			default:
			}
		}})
	}()
	defer func() { cancel(); <-done }()
	must(t, fakesys.SetPortState(root, "mlx5_3", 1, "DOWN"))
	s := waitFor(t, published, "mlx5_3 DOWN", func(s *Snapshot) bool {
		nic, _ := s.Machine.NICByName("mlx5_3")
		return nic.State == "DOWN"
	})
	if s.Cause != "rescan timer" {
		t.Errorf("cause = %q", s.Cause)
	}
}

// TestRunFollowsUpLinkEvents: an RDMA device and its uverbs coming back
// to the host after their netdev, with no event of their own (exclusive
// mode, a pod's DEL), are seen by the follow-up read of the device, with
// no timer. Before, they waited for the 30 s timer.
func TestRunFollowsUpLinkEvents(t *testing.T) {
	root, spec := fakeNode(t, fakesys.Options{})
	var mu sync.Mutex
	holders := map[string]string{"mlx5_3": "ns/a"}
	inv, err := New(root, nil, func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(holders)
	})
	if err != nil {
		t.Fatal(err)
	}
	aside := moveAside(t, root, "sys/class/infiniband/mlx5_3", "sys/class/infiniband_verbs/uverbs3")
	if s, err := inv.Rescan("device moved into the pod"); err != nil || s.InPod["mlx5_3"] != "ns/a" {
		t.Fatalf("mlx5_3 not in its pod: %v, %v", s, err)
	}
	mu.Lock()
	delete(holders, "mlx5_3") // the pod's DEL released it
	mu.Unlock()

	ctx, cancel := context.WithCancel(t.Context())
	events := make(chan LinkEvent, 1)
	published := make(chan *Snapshot, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		inv.Run(ctx, Watch{Events: Chan(events), FollowUp: 50 * time.Millisecond, Published: func(s *Snapshot) {
			if strings.HasPrefix(s.Cause, "link event") { // the device comes back after the event's read
				aside.restore(t)
			}
			published <- s
		}})
	}()
	defer func() { cancel(); <-done }()
	events <- LinkEvent{Name: netdevOf(t, spec, "mlx5_3"), Index: 7} // the netdev is back
	first := waitFor(t, published, "the event's read", func(s *Snapshot) bool { return strings.HasPrefix(s.Cause, "link event") })
	if _, ok := first.Machine.NICByName("mlx5_3"); ok {
		t.Fatalf("mlx5_3 listed before its device came back: %+v", first.Machine.NICs)
	}
	s := waitFor(t, published, "mlx5_3 back with uverbs3", func(s *Snapshot) bool {
		nic, ok := s.Machine.NICByName("mlx5_3")
		return ok && nic.UverbsName == "uverbs3"
	})
	if s.Cause != "follow-up of a link event" || s.Version != first.Version+1 || len(s.InPod) != 0 {
		t.Errorf("snapshot %d caused by %q (in pods %v), want %d by the follow-up", s.Version, s.Cause, s.InPod, first.Version+1)
	}
	if stats := inv.Stats(); stats.FullRescans != 2 || stats.DeviceReads != 2 {
		t.Errorf("stats %+v: want mlx5_3 read twice, no full rescan after the two before the watch", stats)
	}
}

// movedAside are sysfs entries a test took out of a fake machine.
type movedAside struct {
	root  string
	paths []string
	once  sync.Once
}

// moveAside takes the entries out of the machine (kept beside it).
func moveAside(t *testing.T, root string, paths ...string) *movedAside {
	t.Helper()
	for _, p := range paths {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, "aside", p)), 0o755))
		must(t, os.Rename(filepath.Join(root, p), filepath.Join(root, "aside", p)))
	}
	return &movedAside{root: root, paths: paths}
}

// restore puts them back, once.
func (a *movedAside) restore(t *testing.T) {
	a.once.Do(func() {
		for _, p := range a.paths {
			if err := os.Rename(filepath.Join(a.root, "aside", p), filepath.Join(a.root, p)); err != nil {
				t.Error(err)
			}
		}
	})
}
