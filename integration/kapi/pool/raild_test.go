package pool

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// raildProc is raild serving a fake machine as one node of the cluster,
// with no pool of its own: every pool comes from RailPools.
type raildProc struct {
	node, dir, socket, log string
	cmd                    *exec.Cmd
	done                   chan struct{}
	client                 *api.Client
}

// buildRaild builds raild.
func buildRaild(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := harness.BuildPackages(dir, "./daemon"); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "daemon")
}

// startRaild runs raild for node against the API server of kubeconfig.
// It does not wait for raild to answer (see ready).
func startRaild(t *testing.T, bin, kubeconfig, node string) *raildProc {
	t.Helper()
	dir, err := os.MkdirTemp("", "pool-raild-") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &raildProc{node: node, dir: dir, socket: filepath.Join(dir, "raild.sock"), log: filepath.Join(dir, "raild.log")}
	if _, err := fakesys.Write(filepath.Join(dir, "root"), "lab-1x1", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	r.start(t, bin, kubeconfig)
	return r
}

func (r *raildProc) start(t *testing.T, bin, kubeconfig string) {
	t.Helper()
	logFile, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	r.cmd = exec.Command(bin, "serve", "--kubeconfig", kubeconfig, "--node-name", r.node, "--root", filepath.Join(r.dir, "root"),
		"--socket", r.socket, "--state-dir", filepath.Join(r.dir, "state"))
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(r.cmd, r.done)
	r.client = api.NewClient(r.socket, 10*time.Second)
	t.Cleanup(func() { r.stop() })
}

// stop ends raild (SIGTERM) and waits for it.
func (r *raildProc) stop() {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	<-r.done
}

// ready waits until raild answers, or fails with its log if it exits.
func (r *raildProc) ready(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-r.done:
			t.Fatalf("raild for %s exited:\n%s", r.node, r.logText())
		default:
		}
		if _, err := r.client.Pools(context.Background()); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("raild for %s did not answer within a minute:\n%s", r.node, r.logText())
		}
	}
}

// exited waits for raild to exit on its own and returns its log.
func (r *raildProc) exited(t *testing.T) string {
	t.Helper()
	select {
	case <-r.done:
		return r.logText()
	case <-time.After(time.Minute):
		t.Fatalf("raild for %s still runs after a minute:\n%s", r.node, r.logText())
	}
	return ""
}

func (r *raildProc) logText() string {
	raw, _ := os.ReadFile(r.log)
	return string(raw)
}

// allocate takes one address of pool for sandbox (an address-only attachment).
func (r *raildProc) allocate(sandbox, pool string) (netip.Addr, error) {
	plan, err := r.client.Allocate(context.Background(), api.AllocateRequest{Sandbox: sandbox, IfName: "net1", Network: "n",
		Mode: api.ModeIPAM, Pool: pool})
	if err != nil {
		return netip.Addr{}, err
	}
	if len(plan.Interfaces) != 1 || len(plan.Interfaces[0].Addresses) != 1 {
		return netip.Addr{}, fmt.Errorf("plan %+v: want one interface with one address", plan)
	}
	p, err := netip.ParsePrefix(plan.Interfaces[0].Addresses[0].CIDR)
	return p.Addr(), err
}
