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

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// guestNode is the product as a node runs it, inside the guest: the CRI
// rig's containerd (NRI on) with runc, raild reading the guest's real sysfs
// (--root /) as its NRI plugin, and the CNI chain ptp → rail. Pods are made
// with crictl. run.sh hands over the rig (RAIL_VM_CRI_RIG, built on the host
// by integration/cri/setup.sh) and the freshly built raild and rail
// (RAIL_VM_RAIL_BIN); the guest sees both at their host paths.
type guestNode struct {
	rig      string // the CRI rig's cache dir
	railBin  string // raild and rail
	cri      string // integration/cri (start-containerd.sh, stop-containerd.sh)
	work     string // this node's directory, on a tmpfs (overlayfs cannot hold containerd's snapshots)
	run      string // containerd's run dir (RAIL_RIG_RUN)
	socket   string // raild's API socket
	raildLog string
	// raild is the running `raild serve`, started with raildArgs; nil until start.
	raild     *raildProc
	raildArgs []string
}

// requireGuestNode checks what run.sh hands over and makes the node's
// directory; nothing is started yet.
func requireGuestNode(t *testing.T) *guestNode {
	t.Helper()
	n := &guestNode{rig: os.Getenv("RAIL_VM_CRI_RIG"), railBin: os.Getenv("RAIL_VM_RAIL_BIN")}
	if n.rig == "" || n.railBin == "" {
		t.Fatal("RAIL_VM_CRI_RIG and RAIL_VM_RAIL_BIN are not set: run the tests with integration/vm/run.sh")
	}
	for _, f := range []string{filepath.Join(n.rig, "bin/containerd"), filepath.Join(n.rig, "bin/crictl"),
		filepath.Join(n.rig, "cni/bin/ptp"), filepath.Join(n.railBin, "raild"), filepath.Join(n.railBin, "rail")} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s: %v (run.sh builds the CRI rig and raild/rail before booting)", f, err)
		}
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	n.cri = filepath.Join(here, "../cri")
	// /run is the guest's tmpfs; the overlay root cannot be an overlayfs upper dir.
	n.work, err = os.MkdirTemp("/run", "rv-node-")
	if err != nil {
		t.Fatal(err)
	}
	n.run = filepath.Join(n.work, "cri")
	n.socket = filepath.Join(n.work, "raild.sock")
	n.raildLog = filepath.Join(n.work, "raild.log")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("raild log (tail):\n%s", lastLines(readText(n.raildLog), 40))
			t.Logf("containerd log (tail):\n%s", lastLines(readText(filepath.Join(n.run, "containerd.log")), 40))
		}
		_ = os.RemoveAll(n.work)
	})
	return n
}

// start writes the conflist and raild's configuration, starts containerd
// and then raild, and waits until raild has registered with NRI. Cleanups
// stop both (containerd first, so every pod's CNI DEL still reaches raild).
func (n *guestNode) start(t *testing.T, conflist map[string]any, raildYAML string) {
	t.Helper()
	list := harness.WriteJSON(t, n.work, "10-rail-vm.conflist", conflist)
	config := filepath.Join(n.work, "raild.yaml")
	if err := os.WriteFile(config, []byte(raildYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	// Registered first: stop-containerd.sh also cleans up after a half-started containerd.
	t.Cleanup(func() {
		if err := n.script("stop-containerd.sh"); err != nil {
			t.Error(err)
		}
		if n.raild != nil {
			if err := n.raild.stop(syscall.SIGTERM); err != nil {
				t.Errorf("raild did not exit cleanly on SIGTERM: %v", err)
			}
		}
	})
	if err := n.script("start-containerd.sh", "RAIL_RIG_CONFLIST="+list, "RAIL_RIG_CNI_DIRS="+n.railBin); err != nil {
		t.Fatal(err)
	}
	n.startRaild(t, "--config", config, "--root", "/", "--socket", n.socket,
		"--state-dir", filepath.Join(n.work, "state"), "--node-name", "rail-vm")
	t.Logf("containerd + raild ready in %v", time.Since(t0))
}

// nriSocket is where the rig's containerd serves NRI.
func (n *guestNode) nriSocket() string { return filepath.Join(n.run, "nri/nri.sock") }

// script runs one of integration/cri's lifecycle scripts for this node.
func (n *guestNode) script(name string, env ...string) error {
	cmd := exec.Command(filepath.Join(n.cri, name))
	cmd.Env = append(os.Environ(), append(env, "RAIL_RIG_CACHE="+filepath.Dir(n.rig), "RAIL_RIG_RUN="+n.run)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, out)
	}
	return nil
}

// leases asks raild for every lease on the node.
func (n *guestNode) leases(t *testing.T) []api.Lease {
	t.Helper()
	leases, err := api.NewClient(n.socket, 10*time.Second).Leases(context.Background())
	if err != nil {
		t.Fatalf("raild leases: %v", err)
	}
	return leases
}

// crictl runs crictl against the node and returns its trimmed stdout;
// stderr is part of the error.
func (n *guestNode) crictl(args ...string) (string, error) {
	return harness.Crictl{RigDir: n.rig, RunDir: n.run}.Run(args...)
}

// mustCrictl is crictl that fails the test on error.
func (n *guestNode) mustCrictl(t *testing.T, args ...string) string {
	t.Helper()
	return harness.Crictl{RigDir: n.rig, RunDir: n.run}.Must(t, args...)
}

func readText(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
