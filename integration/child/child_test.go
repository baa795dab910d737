package child

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// endThreads runs n goroutines that lock a thread and end without
// unlocking it, so the runtime ends n threads: if the thread that forked a
// child is not held, one of them is it.
func endThreads(n int) {
	for range n {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			close(done)
		}()
		<-done
		runtime.Gosched()
	}
}

// TestStartOutlivesEndedThreads: a child dies with this process
// (Pdeathsig), never with the thread that happened to fork it.
func TestStartOutlivesEndedThreads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		enter func() error
	}{
		{"plain", nil},
		{"with an enter step", func() error { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start(exec.Command("sleep", "60"), tc.enter)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Stop(time.Second) })
			endThreads(200)
			select {
			case <-p.Done():
				t.Fatalf("the child died when threads ended: %v", p.Err())
			case <-time.After(500 * time.Millisecond):
			}
		})
	}
}

// TestStart covers the start failures and the stop paths. A running
// child prints "ready" once set up (its SIGTERM trap in place), and the
// test reads that line before it stops the child.
func TestStart(t *testing.T) {
	enterErr := errors.New("no such namespace")
	for _, tc := range []struct {
		name       string
		cmd        *exec.Cmd
		enter      func() error
		wantErr    string
		grace      time.Duration // Stop's wait for SIGTERM
		wantKilled bool
	}{
		{name: "missing binary", cmd: exec.Command("/nonexistent/rail-child"), wantErr: "start /nonexistent/rail-child"},
		{name: "enter fails", cmd: exec.Command("sleep", "60"), enter: func() error { return enterErr }, wantErr: "no such namespace"},
		{name: "stops on SIGTERM", cmd: exec.Command("sh", "-c", "echo ready; exec sleep 60"), grace: time.Minute},
		{name: "killed when SIGTERM is ignored", cmd: exec.Command("sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"),
			grace: 300 * time.Millisecond, wantKilled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			tc.cmd.Stdout = w
			p, err := Start(tc.cmd, tc.enter)
			w.Close()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Start: %v, want an error naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
				p.Stop(0)
				t.Fatalf("the child printed %q (%v), want ready", line, err)
			}
			if killed := p.Stop(tc.grace); killed != tc.wantKilled {
				t.Fatalf("Stop killed=%v, want %v (exit %v)", killed, tc.wantKilled, p.Err())
			}
			var exitErr *exec.ExitError
			if !errors.As(p.Wait(), &exitErr) {
				t.Fatalf("Wait: %v, want the signal exit", p.Err())
			}
			if err := p.Signal(syscall.SIGTERM); err != nil {
				t.Errorf("signalling an exited child: %v, want nil", err)
			}
		})
	}
}
