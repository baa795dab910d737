package readiness

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// TestHungReadNeverBlocksTheChecks: a container whose read hangs (a stat
// into a hung mount under its root) is given up on: its check says so and
// the checks go on; while it stays hung no second read of it starts, it is
// counted as abandoned, and once it returns the count drops and the next
// check reads it again.
func TestHungReadNeverBlocksTheChecks(t *testing.T) {
	c := checker(t, machine(t, "lab-1x1"), t.TempDir())
	release := make(chan struct{})
	var reads atomic.Int32
	c.reads.timeout = 10 * time.Millisecond
	c.reads.read = func(ctr Container) ContainerView {
		reads.Add(1)
		<-release
		return ContainerView{Exists: true, Present: []string{"/dev/infiniband/uverbs0"}}
	}
	ctr := Container{Name: "app", Pid: 100, Start: 1, Devices: []Device{{Path: "/dev/infiniband/uverbs0"}}}
	for i, want := range []string{"did not finish", "has not returned"} {
		got := c.container(ctr)
		if len(got) != 1 || got[0].Status != api.CheckSkip || !strings.Contains(got[0].Message, want) {
			t.Fatalf("check %d while hung: %+v; want a skip saying %q", i, got, want)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("%d reads started while the first hung; want 1", n)
	}
	if n := c.AbandonedReads(); n != 1 {
		t.Fatalf("abandoned reads %d; want 1", n)
	}
	other := Container{Name: "other", Pid: 200, Start: 1, Devices: ctr.Devices}
	if got := c.container(other); len(got) != 1 || got[0].Status != api.CheckSkip || c.AbandonedReads() != 2 {
		t.Fatalf("another hung container: %+v, abandoned %d; want a skip and 2", got, c.AbandonedReads())
	}
	close(release)
	for deadline := time.Now().Add(20 * time.Second); c.AbandonedReads() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("abandoned reads %d after they returned", c.AbandonedReads())
		}
	}
	c.reads.timeout = time.Minute // only bounds a broken test now
	if got := c.container(ctr); len(got) != 1 || got[0].Status != api.CheckPass {
		t.Fatalf("after the mount came back: %+v; want a pass", got)
	}
}
