package inventory

import (
	"sync"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestRecheckWhileRescanWaitsForHolders: an ADD holds the allocator's
// lock while placement rechecks its NICs (Recheck); a rescan holds the
// inventory's while it asks the allocator for the holders. Neither may
// wait for the other: before, raild hung for good (the soak test's ADDs
// timed out after a minute, every later one too).
func TestRecheckWhileRescanWaitsForHolders(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "frontend-lag", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	var alloc sync.Mutex // stands in for the allocator's lock
	entered := make(chan struct{}, 1)
	holders := func() map[string]string {
		select {
		case entered <- struct{}{}:
		default:
		}
		alloc.Lock()
		defer alloc.Unlock()
		return nil
	}
	inv, err := New(root, nil, holders)
	if err != nil {
		t.Fatal(err)
	}
	<-entered // New's first rescan
	if err := inv.SetProtector(&stubProtector{all: map[string]topology.Protection{}}); err != nil {
		t.Fatal(err)
	}
	<-entered
	nic, _ := inv.Machine().NICByName("mlx5_2")

	alloc.Lock() // the ADD: allocator locked, placement running
	rescanned := make(chan error, 1)
	go func() { _, err := inv.Rescan("event"); rescanned <- err }()
	select {
	case <-entered: // the rescan now waits for the allocator
	case <-time.After(time.Minute):
		t.Fatal("the rescan never asked for the holders")
	}
	rechecked := make(chan error, 1)
	go func() { _, err := inv.Recheck([]topology.NIC{nic}); rechecked <- err }()
	select {
	case err := <-rechecked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		alloc.Unlock()
		t.Fatal("Recheck waited for the rescan, which waits for the allocator's lock its caller holds: deadlock")
	}
	alloc.Unlock()
	if err := <-rescanned; err != nil {
		t.Fatal(err)
	}
}
