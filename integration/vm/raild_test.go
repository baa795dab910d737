package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/api"
)

// raildStopBound is how long raild may take to exit after a signal.
const raildStopBound = 30 * time.Second

// raildProc is one run of `raild serve` in the guest.
type raildProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // cmd.Wait's answer, once exited is closed
}

// startRaild runs `raild serve` with args, its output appended to the
// node's raild log, and waits until it answers on its socket and has
// synchronized with containerd's NRI. It returns the log's length before
// this run, so a caller can read what this run alone logged.
func (n *guestNode) startRaild(t *testing.T, args ...string) int {
	t.Helper()
	from := len(readText(n.raildLog))
	logf, err := os.OpenFile(n.raildLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(n.railBin, "raild"), append([]string{"serve"}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start raild: %v", err)
	}
	p := &raildProc{cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	n.raild, n.raildArgs = p, args
	client := api.NewClient(n.socket, 2*time.Second)
	waitFor(t, "raild's API socket", func() bool {
		if p.hasExited() {
			t.Fatalf("raild exited at start (%v):\n%s", p.err, readText(n.raildLog)[from:])
		}
		_, err := client.Leases(context.Background())
		return err == nil
	})
	waitFor(t, "raild to register with containerd's NRI", func() bool {
		return strings.Contains(readText(n.raildLog)[from:], "synchronized with the runtime")
	})
	return from
}

// restartRaild ends raild with sig (SIGTERM: a clean stop; SIGKILL: a
// crash, leaving its socket file and NRI connection behind) and starts it
// again with the same arguments and state directory. It returns where the
// new run's log starts.
func (n *guestNode) restartRaild(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	t0 := time.Now()
	p := n.raild
	n.raild = nil
	if err := p.stop(sig); err != nil {
		t.Fatalf("raild on %v: %v", sig, err)
	}
	from := n.startRaild(t, n.raildArgs...)
	t.Logf("raild restarted after %s in %v", unix.SignalName(sig), time.Since(t0))
	return from
}

func (p *raildProc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// stop sends sig and waits for the exit: nil for a clean exit after
// SIGTERM, or for death by SIGKILL when that was sent.
func (p *raildProc) stop(sig syscall.Signal) error {
	if p.hasExited() {
		return fmt.Errorf("raild had exited before %v: %v", sig, p.err)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v: %w", sig, err)
	}
	select {
	case <-p.exited:
	case <-time.After(raildStopBound):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("raild had not exited %v after %v: killed", raildStopBound, sig)
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && sig == syscall.SIGKILL && ws.Signaled() && ws.Signal() == sig {
		return nil
	}
	return p.err
}
