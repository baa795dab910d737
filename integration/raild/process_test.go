package raild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netnstest"
)

// raildProc is a raild process on a fake H100 node. Its config, socket,
// state dir and log live in one short temp dir (unix socket paths are
// limited to 107 bytes), removed when the test ends.
type raildProc struct {
	tb     testing.TB
	opt    harness.RaildOptions
	raild  *harness.Raild // nil until the first start
	dir    string
	root   string
	socket string
	// netns is a pod's netns path (CNI_NETNS): a network namespace of its
	// own (podNetns), so raild's reconcile keeps the lease and the plugins,
	// which refuse a CNI_NETNS that is not a netns, take it. It cannot be
	// the test's own netns: skel fails an ADD whose CNI_NETNS is the
	// plugin's netns.
	netns string
}

// podNetns is a fresh network namespace standing in for a pod's, deleted
// when the test ends.
func podNetns(tb testing.TB) *harness.NetNS {
	tb.Helper()
	n, err := harness.CreateNetNS(netnstest.UniqueName(tb, "rit-"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := n.Delete(); err != nil {
			tb.Error(err)
		}
	})
	return n
}

// newRaild prepares a node whose only pool p has the given subnet; the
// caller starts it.
func newRaild(tb testing.TB, subnet string) *raildProc {
	tb.Helper()
	dir, root, err := harness.RaildDir("raild-it-", "h100x8-cx7x4")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	r := &raildProc{tb: tb, dir: dir, root: root, socket: filepath.Join(dir, "raild.sock"), netns: podNetns(tb).Path}
	r.opt = harness.RaildOptions{Bin: bins.raild, Dir: dir, Root: r.root, NodeName: "node1",
		Args:   []string{"--log-level", "info"}, // as deployed: the RSS and throughput tests measure raild
		Config: harness.DaemonConfig{Cooldown: "0s", Pools: []ipam.PoolConfig{{Name: "p", Subnet: subnet}}}}
	tb.Cleanup(r.kill)
	return r
}

// start runs raild (again) and returns once its socket answers.
func (r *raildProc) start() {
	r.tb.Helper()
	var err error
	if r.raild == nil {
		r.raild, err = harness.StartRaild(r.opt)
	} else {
		err = r.raild.Start()
	}
	if err != nil {
		r.tb.Fatal(err)
	}
}

// kill sends SIGKILL and waits; killing a stopped raild does nothing.
func (r *raildProc) kill() {
	if r.raild != nil {
		_ = r.raild.Kill()
	}
}

// stop sends SIGTERM and expects a clean exit.
func (r *raildProc) stop() {
	r.tb.Helper()
	if r.raild == nil {
		return
	}
	if err := r.raild.Stop(); err != nil {
		r.tb.Fatal(err)
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
	kib, err := harness.ProcStatusKiB(r.raild.PID(), field)
	if err != nil {
		r.tb.Fatal(err)
	}
	return kib
}

func (r *raildProc) logTail(n int) string {
	if r.raild == nil {
		return "(raild never started)"
	}
	return r.raild.LogTail(n)
}
