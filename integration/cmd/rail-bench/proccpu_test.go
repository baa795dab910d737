package main

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// spin burns CPU on the calling thread until that thread has used d (it
// may run on any goroutine: it fails the test without stopping it).
func spin(t *testing.T, d time.Duration) {
	t.Helper()
	start := threadCPU(t)
	for threadCPU(t)-start < d && !t.Failed() {
	}
}

func threadCPU(t *testing.T) time.Duration { return readClock(t, unix.CLOCK_THREAD_CPUTIME_ID) }

func ownCPU(t *testing.T) time.Duration { return readClock(t, unix.CLOCK_PROCESS_CPUTIME_ID) }

func readClock(t *testing.T, clock int32) time.Duration {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		t.Errorf("clock %d: %v", clock, err)
	}
	return time.Duration(ts.Nano())
}

// TestProcessCPUIsTheWholeProcessInNanoseconds reads this test process
// through its pid: the figure must be the process's own CPU clock (every
// thread, with those that ended), bracketed by it, and must grow by what a
// thread that then ends burned, to well under a tick.
func TestProcessCPUIsTheWholeProcessInNanoseconds(t *testing.T) {
	pid := os.Getpid()
	read := func() time.Duration {
		t.Helper()
		got, err := processCPU(pid)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	lo := ownCPU(t)
	got := read()
	hi := ownCPU(t)
	if got < lo || got > hi {
		t.Errorf("CPU of this process through its pid: %s, want between %s and %s (its own CPU clock around the read)", got, lo, hi)
	}

	// A thread that burns 30 ms and ends: a per-thread sum would lose it.
	before := read()
	burned := make(chan time.Duration)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		start := threadCPU(t)
		spin(t, 30*time.Millisecond)
		burned <- threadCPU(t) - start
	}()
	b := <-burned
	time.Sleep(20 * time.Millisecond) // let the thread exit
	if grew := read() - before; grew < b {
		t.Errorf("after a thread burned %s and ended, the process's CPU grew by %s, want at least that", b, grew)
	}

	// Nanoseconds, not ticks: successive reads across short bursts of work
	// must not all be multiples of 10 ms.
	ticks := 0
	for range 5 {
		spin(t, time.Millisecond)
		if read()%(10*time.Millisecond) == 0 {
			ticks++
		}
	}
	if ticks == 5 {
		t.Errorf("every reading was a whole number of 10 ms ticks: the clock is not in nanoseconds")
	}
}

// TestProcessCPUOfAnotherProcess reads a busy child: more than 0, and
// growing while it spins.
func TestProcessCPUOfAnotherProcess(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	first, err := processCPU(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := processCPU(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if got > first && got > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a spinning child's CPU stayed at %s for 10 s, want it to grow", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcessCPUOfNoProcess(t *testing.T) {
	for _, pid := range []int{0, -1, 1<<22 + 7} {
		if _, err := processCPU(pid); err == nil || !strings.Contains(err.Error(), "did raild exit") {
			t.Errorf("CPU of pid %d: error %v, want one saying raild may have exited", pid, err)
		}
	}
}
