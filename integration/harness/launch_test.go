package harness

import (
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestLaunchHereOutlivesEndedThreads: a process started in the caller's
// netns dies with the caller (Pdeathsig), not with the OS thread that
// happened to start it. Goroutines that lock a thread and end without
// unlocking end that thread (as CreateNetNS's do); run many of them after
// the start, so one lands on the starting thread if it is not held.
func TestLaunchHereOutlivesEndedThreads(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	var mu sync.Mutex
	var exitErr error
	exited := make(chan struct{})
	if err := launchHere(cmd, func(err error) { mu.Lock(); exitErr = err; mu.Unlock(); close(exited) }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	for range 200 {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			close(done)
		}()
		<-done
		runtime.Gosched()
	}
	select {
	case <-exited:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the process died when threads ended: %v", exitErr)
	case <-time.After(500 * time.Millisecond):
	}
}
