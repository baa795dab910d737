package raild

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// raildProc is a raild process on a fake H100 node. Its config, socket,
// state dir and log live in one short temp dir (unix socket paths are
// limited to 107 bytes), removed when the test ends.
type raildProc struct {
	tb       testing.TB
	dir      string
	root     string
	socket   string
	stateDir string
	logPath  string
	// netns stands in for a pod's netns path (CNI_NETNS): an existing
	// file, so raild's reconcile keeps the lease. It cannot be the test's
	// own netns: skel fails an ADD whose CNI_NETNS is the plugin's netns.
	netns   string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error // set before exited is closed
}

// newRaild prepares a node whose only pool p has the given subnet; the
// caller starts it.
func newRaild(tb testing.TB, subnet string) *raildProc {
	tb.Helper()
	dir, err := os.MkdirTemp("", "raild-it-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	r := &raildProc{tb: tb, dir: dir, root: filepath.Join(dir, "root"), socket: filepath.Join(dir, "raild.sock"),
		stateDir: filepath.Join(dir, "state"), logPath: filepath.Join(dir, "raild.log"), netns: filepath.Join(dir, "netns")}
	if err := os.WriteFile(r.netns, nil, 0o600); err != nil {
		tb.Fatal(err)
	}
	if _, err := fakesys.Write(r.root, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		tb.Fatal(err)
	}
	config := fmt.Sprintf("cooldown: \"0s\"\npools:\n- name: p\n  subnet: %s\n", subnet)
	if err := os.WriteFile(filepath.Join(dir, "raild.yaml"), []byte(config), 0o600); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.kill)
	return r
}

// start runs raild and returns once its socket answers.
func (r *raildProc) start() {
	r.tb.Helper()
	logFile, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.tb.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bins.raild, "serve", "--config", filepath.Join(r.dir, "raild.yaml"), "--root", r.root,
		"--socket", r.socket, "--state-dir", r.stateDir, "--node-name", "node1")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		r.tb.Fatalf("start raild: %v", err)
	}
	exited := make(chan struct{})
	r.cmd, r.exited = cmd, exited
	go func() {
		r.waitErr = cmd.Wait()
		close(exited)
	}()
	client := api.NewClient(r.socket, time.Second)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		select {
		case <-exited:
			r.tb.Fatalf("raild exited at start (%v):\n%s", r.waitErr, r.logTail(20))
		default:
		}
		if _, err := client.Pools(context.Background()); err == nil {
			return
		}
		if time.Now().After(deadline) {
			r.tb.Fatalf("raild did not answer on %s within 30s:\n%s", r.socket, r.logTail(20))
		}
	}
}

// kill sends SIGKILL and waits; killing a stopped raild does nothing.
func (r *raildProc) kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
	r.cmd = nil
}

// stop sends SIGTERM and expects a clean exit.
func (r *raildProc) stop() {
	r.tb.Helper()
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		r.kill()
		r.tb.Fatalf("raild ignored SIGTERM for 10s:\n%s", r.logTail(20))
	}
	r.cmd = nil
	if r.waitErr != nil {
		r.tb.Fatalf("raild exited with %v after SIGTERM:\n%s", r.waitErr, r.logTail(20))
	}
}

func (r *raildProc) client() *api.Client { return api.NewClient(r.socket, 0) }

// leases runs `raild leases --socket PATH --json`, the interface tools use.
func (r *raildProc) leases() ([]api.Lease, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(bins.raild, "leases", "--socket", r.socket, "--json")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("raild leases: %w: %s", err, strings.TrimSpace(errOut.String()))
	}
	var leases []api.Lease
	if err := json.Unmarshal(out.Bytes(), &leases); err != nil {
		return nil, fmt.Errorf("raild leases --json printed %q: %w", out.String(), err)
	}
	return leases, nil
}

// mustLeases is leases for the test goroutine.
func (r *raildProc) mustLeases() []api.Lease {
	r.tb.Helper()
	leases, err := r.leases()
	if err != nil {
		r.tb.Fatal(err)
	}
	return leases
}

// statusKiB reads a field such as VmRSS (in KiB) from /proc/PID/status.
func (r *raildProc) statusKiB(field string) int {
	r.tb.Helper()
	kib, err := harness.ProcStatusKiB(r.cmd.Process.Pid, field)
	if err != nil {
		r.tb.Fatal(err)
	}
	return kib
}

func (r *raildProc) logTail(n int) string {
	data, err := os.ReadFile(r.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
