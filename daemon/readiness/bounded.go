package readiness

import (
	"fmt"
	"sync"
	"time"

	"github.com/railcni/rail/daemon/process"
)

// defaultReadTimeout bounds one container's view: its /proc files and the
// stats under its root answer in microseconds unless a mount there hangs
// (a dead NFS server, a FUSE daemon that stopped).
const defaultReadTimeout = 2 * time.Second

// viewReads runs each container's read off the checks' loop and waits for
// it at most timeout. A read that does not finish is abandoned, not
// killed (a thread in an uninterruptible stat cannot be): it is counted
// until it returns, and no second read of that process starts meanwhile,
// so a hung mount costs one goroutine per container, not one per check.
type viewReads struct {
	timeout time.Duration
	read    func(Container) ContainerView // Checker.View; tests stand in a hung one

	mu        sync.Mutex
	inFlight  map[process.Ref]bool // true once abandoned
	abandoned int
}

func newViewReads(read func(Container) ContainerView) *viewReads {
	return &viewReads{timeout: defaultReadTimeout, read: read, inFlight: map[process.Ref]bool{}}
}

// view is the container's view, or one whose ReadErr says the read did
// not finish in time (or an earlier one still has not).
func (r *viewReads) view(ctr Container) ContainerView {
	if ctr.Pid <= 0 {
		return ContainerView{}
	}
	ref := process.Ref{Pid: ctr.Pid, Start: ctr.Start}
	r.mu.Lock()
	if _, busy := r.inFlight[ref]; busy {
		r.mu.Unlock()
		return ContainerView{Exists: true, ReadErr: fmt.Errorf("an earlier read of /proc/%d has not returned after %s "+
			"(a hung mount under the container's root?)", ctr.Pid, r.timeout)}
	}
	r.inFlight[ref] = false
	r.mu.Unlock()
	done := make(chan ContainerView, 1)
	go func() {
		v := r.read(ctr)
		r.mu.Lock()
		if r.inFlight[ref] {
			r.abandoned--
		}
		delete(r.inFlight, ref)
		r.mu.Unlock()
		done <- v
	}()
	timer := time.NewTimer(r.timeout)
	defer timer.Stop()
	select {
	case v := <-done:
		return v
	case <-timer.C:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, still := r.inFlight[ref]; !still { // it returned as the timer fired
		return <-done
	}
	r.inFlight[ref] = true
	r.abandoned++
	return ContainerView{Exists: true, ReadErr: fmt.Errorf("reading /proc/%d did not finish in %s "+
		"(a hung mount under the container's root?)", ctr.Pid, r.timeout)}
}

// Abandoned is how many reads gave up on are still blocked.
func (r *viewReads) Abandoned() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.abandoned
}
