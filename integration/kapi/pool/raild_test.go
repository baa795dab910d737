package pool

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// raildProc is raild serving a fake machine as one node of the cluster,
// with no pool of its own: every pool comes from RailPools.
type raildProc struct {
	*harness.Raild
	node   string
	client *api.Client
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
	dir, root, err := harness.RaildDir("pool-raild-", "lab-1x1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	raild, err := harness.LaunchRaild(harness.RaildOptions{Bin: bin, Dir: dir, Root: root, NodeName: node,
		Config: harness.DaemonConfig{Pools: []ipam.PoolConfig{}}, Args: []string{"--kubeconfig", kubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raild.Stop() })
	return &raildProc{Raild: raild, node: node, client: api.NewClient(raild.Socket, 10*time.Second)}
}

// restart stops raild (SIGTERM) and starts it again.
func (r *raildProc) restart(t *testing.T) {
	t.Helper()
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
}

// ready waits until raild answers, or fails with its log if it exits.
func (r *raildProc) ready(t *testing.T) {
	t.Helper()
	if err := r.WaitReady(); err != nil {
		t.Fatalf("raild for %s: %v", r.node, err)
	}
}

// exited waits for raild to exit on its own and returns its log.
func (r *raildProc) exited(t *testing.T) string {
	t.Helper()
	select {
	case <-r.Exited():
		return r.LogTail(200)
	case <-time.After(time.Minute):
		t.Fatalf("raild for %s still runs after a minute:\n%s", r.node, r.LogTail(200))
	}
	return ""
}

// allocate takes one address of pool for sandbox (an address-only attachment).
func (r *raildProc) allocate(sandbox, pool string) (netip.Addr, error) {
	plan, err := r.client.Allocate(context.Background(), api.AllocateRequest{Sandbox: sandbox, CNIIfName: "net1", Network: "n",
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
