package inventory

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
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
func testNetns(t *testing.T) (netns.NsHandle, *netlink.Handle) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace")
	}
	name := fmt.Sprintf("ry-inv-%d", os.Getpid())
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	origin, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer origin.Close()
	ns, err := netnstest.NewNamed(name)
	if setErr := netns.Set(origin); setErr != nil {
		t.Fatalf("back to the test's netns: %v", setErr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ns.Close()
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete netns %s: %v", name, err)
		}
	})
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return ns, h
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

// TestRunFollowsLinkEvents: with no rescan timer, link events alone (veth
// stand-ins really going down, up, renamed, deleted) make the inventory
// read the machine again, and each snapshot shows the files as they are.
func TestRunFollowsLinkEvents(t *testing.T) {
	ns, h := testNetns(t)
	root, _ := fakeNode(t, fakesys.Options{})
	inv, err := New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events, err := LinkEvents(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	published := make(chan *Snapshot, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		inv.Run(ctx, Watch{Events: events, Settle: 20 * time.Millisecond, Published: func(s *Snapshot) { published <- s }})
	}()
	defer func() { cancel(); <-done }()

	base := fmt.Sprintf("ryinv%d", os.Getpid()%100000)
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: base + "a"}, PeerName: base + "b"}
	must(t, h.LinkAdd(veth))
	must(t, h.LinkSetUp(veth))
	waitFor(t, published, "a link event", func(s *Snapshot) bool { return strings.HasPrefix(s.Cause, "link event") })

	steps := []struct {
		name  string
		state string
		link  func() error
	}{
		{"port down", "DOWN", func() error { return h.LinkSetDown(veth) }},
		{"port up", "ACTIVE", func() error { return h.LinkSetUp(veth) }},
		{"renamed on the host", "DOWN", func() error {
			if err := h.LinkSetDown(veth); err != nil {
				return err
			}
			return h.LinkSetName(veth, base+"r")
		}},
		{"removed", "ACTIVE", func() error { return h.LinkDel(veth) }},
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

// TestRunFollowsUpLinkEvents: a change that trails a link event without
// an event of its own (an RDMA device and its uverbs coming back after
// its netdev) is seen by the follow-up rescan, with no timer. Before,
// it waited for the 30 s timer.
func TestRunFollowsUpLinkEvents(t *testing.T) {
	root, _ := fakeNode(t, fakesys.Options{})
	inv, err := New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	events := make(chan string, 1)
	published := make(chan *Snapshot, 16)
	done := make(chan struct{})
	changed := make(chan error, 1)
	go func() {
		defer close(done)
		inv.Run(ctx, Watch{Events: events, FollowUp: 50 * time.Millisecond, Published: func(s *Snapshot) {
			if strings.HasPrefix(s.Cause, "link event") { // change the files after the event's rescan, before the follow-up
				changed <- fakesys.SetPortState(root, "mlx5_3", 1, "DOWN")
			}
			published <- s
		}})
	}()
	defer func() { cancel(); <-done }()
	events <- "ens1"
	first := waitFor(t, published, "the event's rescan", func(s *Snapshot) bool { return strings.HasPrefix(s.Cause, "link event") })
	must(t, <-changed)
	s := waitFor(t, published, "mlx5_3 DOWN", func(s *Snapshot) bool {
		nic, _ := s.Machine.NICByName("mlx5_3")
		return nic.State == "DOWN"
	})
	if s.Cause != "follow-up of a link event" || s.Version != first.Version+1 {
		t.Errorf("snapshot %d caused by %q, want %d by the follow-up", s.Version, s.Cause, first.Version+1)
	}
}
