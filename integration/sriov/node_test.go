package sriov

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/ipam"
)

// criNode is the product as a node runs it, in the SR-IOV guest (as make
// test-vm runs it in its own): the CRI rig's containerd (NRI on) with runc,
// raild on the guest's real sysfs (--root /) as its NRI plugin, and the
// CNI chain ptp → rail in vf mode; pods come from crictl. test.sh builds
// the CRI rig on the host (integration/cri/setup.sh) and hands over where
// it is (RAIL_SRIOV_CRI_RIG) and this checkout (RAIL_SRIOV_REPO), both
// under the guest's /host.
type criNode struct {
	rig   string // the CRI rig's cache dir
	cri   string // integration/cri (its lifecycle scripts)
	work  string // this node's directory, on a tmpfs of its own
	run   string // containerd's run dir (RAIL_RIG_RUN)
	raild *harness.Raild
}

// startCRINode starts containerd with the chain ptp → rail (vf mode,
// sriov-cni's keys, the pod's annotations passed on) and raild with the
// "vf" pool and NRI. Cleanups stop containerd first (every pod's CNI DEL
// still reaches raild), then raild.
func startCRINode(t *testing.T) *criNode {
	t.Helper()
	bin, repo := os.Getenv("RAIL_SRIOV_BIN"), os.Getenv("RAIL_SRIOV_REPO")
	n := &criNode{rig: os.Getenv("RAIL_SRIOV_CRI_RIG")}
	if bin == "" || repo == "" || n.rig == "" {
		t.Fatal("RAIL_SRIOV_BIN, RAIL_SRIOV_REPO and RAIL_SRIOV_CRI_RIG are not set: run through make test-sriov")
	}
	n.cri = filepath.Join(repo, "integration/cri")
	var err error
	if n.work, err = os.MkdirTemp("/run", "rail-node-"); err != nil {
		t.Fatal(err)
	}
	// the guest's root is an overlay, which cannot hold containerd's overlay
	// snapshots; only root may write there (raild's socket)
	if _, err := run("mount", "-t", "tmpfs", "-o", "mode=0700", "rail-node", n.work); err != nil {
		t.Fatal(err)
	}
	n.run = filepath.Join(n.work, "cri")
	// containerd copies the node's /etc/hosts into each sandbox; the rig's
	// root has none (debootstrap leaves it to the installer)
	if _, err := os.Stat("/etc/hosts"); os.IsNotExist(err) {
		if err := os.WriteFile("/etc/hosts", []byte("127.0.0.1\tlocalhost\n127.0.1.1\tsriov-rig\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if _, err := run("umount", "-l", n.work); err != nil {
			t.Error(err)
		}
		_ = os.Remove(n.work)
	})
	conflist := map[string]any{
		"cniVersion": "1.1.0", "name": "rail-sriov",
		"plugins": []any{
			map[string]any{"type": "ptp", "ipMasq": false, "ipam": map[string]any{
				"type": "host-local", "dataDir": filepath.Join(n.work, "host-local"),
				"ranges": [][]map[string]string{{{"subnet": "10.249.0.0/24"}}}}},
			map[string]any{"type": "rail", "socket": filepath.Join(n.work, "raild.sock"), "mode": "vf", "pool": "vf",
				"vlan": 100, "vlanQoS": 3, "spoofchk": "off", "trust": "on", "max_tx_rate": 100,
				"capabilities": map[string]bool{"io.kubernetes.cri.pod-annotations": true}},
		},
	}
	list, err := json.Marshal(conflist)
	if err != nil {
		t.Fatal(err)
	}
	listFile := filepath.Join(n.work, "10-rail-sriov.conflist")
	if err := os.WriteFile(listFile, list, 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	// registered first: stop-containerd.sh also cleans up after a half-started
	// containerd; raild stops after it, so every pod's CNI DEL reaches it
	t.Cleanup(func() {
		if t.Failed() && n.raild != nil {
			t.Logf("raild's log:\n%s", n.raild.LogTail(40))
			t.Logf("containerd's log:\n%s", lastLines(filepath.Join(n.run, "containerd.log"), 30))
		}
		if err := n.script("stop-containerd.sh"); err != nil {
			t.Error(err)
		}
		if n.raild != nil {
			_ = n.raild.Stop()
		}
	})
	if err := n.script("start-containerd.sh", "RAIL_RIG_CONFLIST="+listFile, "RAIL_RIG_CNI_DIRS="+bin); err != nil {
		t.Fatal(err)
	}
	// raild's directory is the node's: the conflist names its socket there
	r, err := harness.StartRaild(harness.RaildOptions{Bin: filepath.Join(bin, "raild"), Dir: n.work, Root: "/", NodeName: "sriov-rig",
		Config: harness.DaemonConfig{Cooldown: "0s", Pools: []ipam.PoolConfig{{Name: "vf", Subnet: "10.72.0.0/24"}},
			NRI: map[string]any{"enabled": true, "socket": filepath.Join(n.run, "nri/nri.sock")}}})
	n.raild = r // nil only when it did not start at all
	if err != nil {
		t.Fatalf("start raild: %v", err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if b, _ := os.ReadFile(r.Log); bytes.Contains(b, []byte("synchronized with the runtime")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("raild did not register with containerd's NRI in 60 s")
		}
	}
	t.Logf("containerd + raild ready in %v", time.Since(t0))
	return n
}

// script runs one of integration/cri's lifecycle scripts for this node.
func (n *criNode) script(name string, env ...string) error {
	cmd := exec.Command(filepath.Join(n.cri, name))
	cmd.Env = append(os.Environ(), append(env, "RAIL_RIG_CACHE="+filepath.Dir(n.rig), "RAIL_RIG_RUN="+n.run)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, out)
	}
	return nil
}

// crictl runs crictl against the node and returns its trimmed stdout;
// stderr is part of the error.
func (n *criNode) crictl(args ...string) (string, error) {
	return harness.Crictl{RigDir: n.rig, RunDir: n.run}.Run(args...)
}

// mustCrictl is crictl that fails the test on error.
func (n *criNode) mustCrictl(t *testing.T, args ...string) string {
	t.Helper()
	return harness.Crictl{RigDir: n.rig, RunDir: n.run}.Must(t, args...)
}

// writeJSON writes v as JSON into the node's directory and returns the path.
func (n *criNode) writeJSON(t *testing.T, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(n.work, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runPod runs a pod sandbox with annotations (the CNI chain runs for it)
// and returns its id and the config crictl needs for its containers.
func (n *criNode) runPod(t *testing.T, name string, annotations map[string]string) (id, config string) {
	t.Helper()
	config = n.writeJSON(t, "pod-"+name+".json", map[string]any{
		"metadata":      map[string]any{"name": name, "namespace": "sriov", "uid": name + "-uid"},
		"log_directory": filepath.Join(n.work, "logs", name),
		"annotations":   annotations,
		"linux":         map[string]any{},
	})
	t0 := time.Now()
	id = n.mustCrictl(t, "runp", config)
	t.Logf("runp %s: %v", name, time.Since(t0))
	return id, config
}

// startContainer creates and starts a busybox container of the pod that
// sleeps, and returns its id.
func (n *criNode) startContainer(t *testing.T, pod, podConfig, name string) string {
	t.Helper()
	ctr := n.writeJSON(t, "ctr-"+name+".json", map[string]any{
		"metadata": map[string]any{"name": name},
		"image":    map[string]any{"image": "localhost/rail-rig/busybox:1"},
		"command":  []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"},
		"log_path": name + ".log",
		"linux":    map[string]any{},
	})
	id := n.mustCrictl(t, "create", pod, ctr, podConfig)
	n.mustCrictl(t, "start", id)
	return id
}

// lastLines is the end of a file, for a failure's log.
func lastLines(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
