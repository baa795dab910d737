// Package cri is Rail's end-to-end test in a real containerd: CRI pods
// through the ptp → rail CNI chain, raild as the NRI plugin, a fake GPU
// node whose RDMA device nodes are harmless memory devices. It runs only
// when RAIL_CRI_RIG names a rig built by setup.sh (run.sh does that).
package cri

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/daemon/podinfo/podinfotest"
	"github.com/railcni/rail/integration/harness"
)

const (
	podNamespace = "rail-e2e"
	memlockBytes = 4 << 20 // below this machine's 8 MiB hard cap, so the change shows
	sleepForever = "trap 'exit 0' TERM; while true; do sleep 1; done"
)

// e2e is one prepared node: rig, fake machine, kubelet stand-in, raild.
type e2e struct {
	rig   *rig
	node  *node
	raild *raild
	work  string
}

func TestCRI(t *testing.T) {
	r := requireRig(t)
	bin := r.repoBin(t)
	e := setupE2E(t, r, bin)

	gpuPod := e.runPod(t, "gpu-pod", false, nil)
	leases := e.podLeases(t, gpuPod)
	if len(leases) != 1 || !slices.Equal(leases[0].NICs, []string{"mlx5_0"}) {
		t.Fatalf("GPUs 0,1 should lease mlx5_0 (their PCIe switch): %+v", leases)
	}
	addr := strings.Split(leases[0].Address, "/")[0]

	t.Run("leased pod gets its NIC's devices, memlock and env", func(t *testing.T) {
		app := e.startContainer(t, gpuPod, "gpu-pod", false, nil, "app")
		e.expectInjected(t, app, map[string][2]uint32{"uverbs0": {1, 3}, "rdma_cm": {1, 8}}, "=mlx5_0", "mlx5_0:1")
		if out := e.rig.crictl(t, "exec", app, "ip", "-4", "-o", "addr", "show", "rail0"); !strings.Contains(out, addr+"/") {
			t.Errorf("rail0 in the pod has no %s: %q", addr, out)
		}
	})
	t.Run("second container of the pod gets the same; its own NCCL_IB_HCA stays", func(t *testing.T) {
		side := e.startContainer(t, gpuPod, "gpu-pod", false, nil, "sidecar", "NCCL_IB_HCA=mine")
		e.expectInjected(t, side, map[string][2]uint32{"uverbs0": {1, 3}, "rdma_cm": {1, 8}}, "mine", "mlx5_0:1")
	})
	t.Run("pod without a lease gets nothing", func(t *testing.T) {
		plain := e.runPod(t, "plain", true, nil)
		c := e.startContainer(t, plain, "plain", true, nil, "app")
		e.expectNothing(t, c)
	})
	t.Run("annotations naming other devices are refused, containers start", func(t *testing.T) {
		ann := map[string]string{"rail.dev/devices.sda": "/dev/sda", "rail.dev/devices.mem": "../../dev/mem"}
		p := e.runPod(t, "bad-annotations", true, ann)
		for _, name := range []string{"sda", "mem"} {
			c := e.startContainer(t, p, "bad-annotations", true, ann, name)
			e.expectNothing(t, c)
		}
		log := readFile(e.raild.log)
		for _, want := range []string{`"value":"/dev/sda"`, `"value":"../../dev/mem"`} {
			if !strings.Contains(log, "refused device annotation") || !strings.Contains(log, want) {
				t.Errorf("raild did not log the refusal of %s", want)
			}
		}
	})
	t.Run("annotation choosing RDMA devices in an allowed namespace", func(t *testing.T) {
		ann := map[string]string{"rail.dev/devices": "uverbs3,rdma_cm"}
		p := e.runPod(t, "chosen", true, ann)
		c := e.startContainer(t, p, "chosen", true, ann, "app")
		e.expectInjected(t, c, map[string][2]uint32{"uverbs3": {1, 9}, "rdma_cm": {1, 8}}, "=mlx5_3", "mlx5_3:1")
	})
	t.Run("raild registers again after containerd restarts", func(t *testing.T) {
		before := strings.Count(readFile(e.raild.log), "synchronized with the runtime")
		e.rig.restart(t)
		waitFor(t, "raild to register with the new containerd", func() bool {
			return strings.Count(readFile(e.raild.log), "synchronized with the runtime") > before
		})
		c := e.startContainer(t, gpuPod, "gpu-pod", false, nil, "after-restart")
		e.expectInjected(t, c, map[string][2]uint32{"uverbs0": {1, 3}, "rdma_cm": {1, 8}}, "=mlx5_0", "mlx5_0:1")
	})
	t.Run("stopp and rmp release the lease and give the NIC back", func(t *testing.T) {
		netdev := e.node.netdevs["mlx5_0"]
		if _, err := netlink.LinkByName(netdev); err == nil {
			t.Fatalf("%s is still in the host namespace while the pod holds it", netdev)
		}
		netnsPath := e.podNetns(t, gpuPod)
		t0 := time.Now()
		e.rig.crictl(t, "stopp", gpuPod)
		t.Logf("stopp took %v", time.Since(t0))
		if l, err := netlink.LinkByName(netdev); err != nil {
			t.Errorf("%s is not back in the host namespace after stopp: %v", netdev, err)
		} else if l.Attrs().Name != netdev {
			t.Errorf("NIC came back as %s", l.Attrs().Name)
		}
		if got := e.podLeases(t, gpuPod); len(got) != 0 {
			t.Errorf("leases after stopp: %+v", got)
		}
		e.rig.crictl(t, "rmp", gpuPod)
		if _, err := os.Stat(netnsPath); !os.IsNotExist(err) {
			t.Errorf("pod netns %s still there (%v)", netnsPath, err)
		}
		e.rig.crictl(t, "rmp", "-fa")
		if all := e.raild.leases(t); len(all) != 0 {
			t.Errorf("leases left: %+v", all)
		}
	})
}

// setupE2E prepares everything; cleanups undo it in reverse order.
func setupE2E(t *testing.T, r *rig, bin string) *e2e {
	work, err := os.MkdirTemp("/tmp", "rail-cri-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("raild log:\n%s", readFile(filepath.Join(work, "raild.log")))
			t.Logf("containerd log (tail):\n%s", tail(readFile(filepath.Join(work, "run/containerd.log")), 40))
		}
		_ = os.RemoveAll(work)
	})
	r.run = filepath.Join(work, "run")
	e := &e2e{rig: r, work: work, node: newNode(t, work)}
	net := 100 + int(e.node.suffix[0])%100

	kubelet, err := podinfotest.Start(filepath.Join(work, "pod-resources.sock"), []podinfotest.Pod{{
		Namespace: podNamespace, Name: "gpu-pod",
		Containers: []podinfotest.Container{{Name: "app", Devices: map[string][]string{"nvidia.com/gpu": e.node.gpuUUIDs(t, 0, 1)}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kubelet.Stop)

	conflist := harness.WriteJSON(t, work, "10-rail-e2e.conflist", map[string]any{
		"cniVersion": "1.1.0", "name": "rail-e2e",
		"plugins": []any{
			map[string]any{"type": "ptp", "ipMasq": false, "ipam": map[string]any{
				"type": "host-local", "dataDir": "@RUN@/cni/ipam",
				"ranges": [][]map[string]string{{{"subnet": fmt.Sprintf("10.249.%d.0/24", net)}}}}},
			map[string]any{"type": "rail", "socket": filepath.Join(work, "raild.sock"), "mode": "move",
				"capabilities": map[string]bool{"io.kubernetes.cri.pod-annotations": true}},
		},
	})
	config := filepath.Join(work, "raild.yaml")
	yaml := fmt.Sprintf(`nodeName: e2e-node
cooldown: "0s"
pools:
- name: rail
  subnet: 10.56.%d.0/24
nri:
  enabled: true
  socket: %s
  memlock: "%d"
  annotationNamespaces: [%s]
`, net, filepath.Join(r.run, "nri/nri.sock"), memlockBytes, podNamespace)
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}

	t0 := time.Now()
	r.start(t, conflist, bin)
	t.Cleanup(func() {
		r.stop(t)
		e.raild.stop(t)
	})
	e.raild = startRaild(t, bin, "--config", config, "--root", e.node.root, "--socket", filepath.Join(work, "raild.sock"),
		"--state-dir", filepath.Join(work, "state"), "--node-name", "e2e-node",
		"--pod-resources-socket", kubelet.Socket())
	waitFor(t, "raild to register with NRI", func() bool {
		return strings.Contains(readFile(e.raild.log), "synchronized with the runtime")
	})
	t.Logf("containerd + raild ready in %v", time.Since(t0))
	return e
}

// podConfig is a CRI PodSandboxConfig as crictl reads it.
func (e *e2e) podConfig(t *testing.T, name string, hostNetwork bool, annotations map[string]string) string {
	t.Helper()
	cfg := map[string]any{
		"metadata":      map[string]any{"name": name, "namespace": podNamespace, "uid": name + "-" + e.node.suffix},
		"log_directory": filepath.Join(e.work, "logs", name),
		"annotations":   annotations,
		"linux":         map[string]any{},
	}
	if hostNetwork {
		cfg["linux"] = map[string]any{"security_context": map[string]any{"namespace_options": map[string]any{"network": 2}}}
	}
	return harness.WriteJSON(t, e.work, "pod-"+name+".json", cfg)
}

func (e *e2e) runPod(t *testing.T, name string, hostNetwork bool, annotations map[string]string) string {
	t.Helper()
	t0 := time.Now()
	id := e.rig.crictl(t, "runp", e.podConfig(t, name, hostNetwork, annotations))
	t.Logf("runp %s: %v", name, time.Since(t0))
	return id
}

// startContainer creates and starts a busybox container; env is KEY=VALUE.
func (e *e2e) startContainer(t *testing.T, pod, podName string, hostNetwork bool, annotations map[string]string, name string, env ...string) string {
	t.Helper()
	var envs []map[string]string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		envs = append(envs, map[string]string{"key": k, "value": v})
	}
	ctr := harness.WriteJSON(t, e.work, "ctr-"+podName+"-"+name+".json", map[string]any{
		"metadata": map[string]any{"name": name},
		"image":    map[string]any{"image": "localhost/rail-rig/busybox:1"},
		"command":  []string{"/bin/sh", "-c", sleepForever},
		"envs":     envs,
		"log_path": name + ".log",
		"linux":    map[string]any{},
	})
	t0 := time.Now()
	id := e.rig.crictl(t, "create", pod, ctr, e.podConfig(t, podName, hostNetwork, annotations))
	e.rig.crictl(t, "start", id)
	t.Logf("create+start %s/%s: %v", podName, name, time.Since(t0))
	return id
}

// expectInjected checks, inside the running container, each device's
// type and numbers, that it opens for reading and writing, the memlock
// limit and the NCCL/UCX variables.
func (e *e2e) expectInjected(t *testing.T, ctr string, devs map[string][2]uint32, hca, ucx string) {
	t.Helper()
	for name, num := range devs {
		path := "/dev/infiniband/" + name
		got := e.rig.crictl(t, "exec", ctr, "stat", "-c", "%F %t:%T", path)
		want := fmt.Sprintf("character special file %x:%x", num[0], num[1])
		if got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
		if _, err := e.rig.crictlErr("exec", ctr, "sh", "-c", "head -c 1 "+path+" >/dev/null && echo x >"+path); err != nil {
			t.Errorf("%s cannot be opened in the container: %v", path, err)
		}
	}
	entries := strings.Fields(e.rig.crictl(t, "exec", ctr, "ls", "/dev/infiniband"))
	if len(entries) != len(devs) {
		t.Errorf("/dev/infiniband holds %v, want exactly %d devices", entries, len(devs))
	}
	if got := memlock(t, e, ctr); got != fmt.Sprintf("%d %d", memlockBytes, memlockBytes) {
		t.Errorf("memlock soft/hard %q, want %d", got, memlockBytes)
	}
	env := e.containerEnv(t, ctr)
	for key, want := range map[string]string{"NCCL_IB_HCA": hca, "UCX_NET_DEVICES": ucx} {
		if got, ok := env[key]; !ok || got != want {
			t.Errorf("%s=%q (set: %v), want %q", key, got, ok, want)
		}
	}
}

// expectNothing checks that no RDMA device, limit or variable was added.
func (e *e2e) expectNothing(t *testing.T, ctr string) {
	t.Helper()
	if out, err := e.rig.crictlErr("exec", ctr, "ls", "/dev/infiniband"); err == nil {
		t.Errorf("/dev/infiniband exists in the container: %q", out)
	}
	if got := memlock(t, e, ctr); got == fmt.Sprintf("%d %d", memlockBytes, memlockBytes) {
		t.Errorf("memlock was changed to %q", got)
	}
	env := e.containerEnv(t, ctr)
	for _, key := range []string{"NCCL_IB_HCA", "UCX_NET_DEVICES", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME", "NCCL_IB_ADDR_RANGE", "NCCL_TOPO_FILE"} {
		if got, ok := env[key]; ok {
			t.Errorf("%s=%q was set", key, got)
		}
	}
}

// containerEnv is the environment a process started in the container sees.
func (e *e2e) containerEnv(t *testing.T, ctr string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, line := range strings.Split(e.rig.crictl(t, "exec", ctr, "env"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

// memlock returns "soft hard" of Max locked memory in the container.
func memlock(t *testing.T, e *e2e, ctr string) string {
	t.Helper()
	out := e.rig.crictl(t, "exec", ctr, "grep", "Max locked memory", "/proc/self/limits")
	f := strings.Fields(out)
	if len(f) < 5 {
		t.Fatalf("limits line %q", out)
	}
	return f[3] + " " + f[4]
}

func (e *e2e) podLeases(t *testing.T, pod string) []leaseView {
	t.Helper()
	var out []leaseView
	for _, l := range e.raild.leases(t) {
		if l.Sandbox == pod {
			out = append(out, leaseView{NICs: l.NICs, Address: l.Address})
		}
	}
	return out
}

type leaseView struct {
	NICs    []string
	Address string
}

// podNetns is the pod's network namespace path, from crictl inspectp.
func (e *e2e) podNetns(t *testing.T, pod string) string {
	t.Helper()
	out := e.rig.crictl(t, "inspectp", "-o", "go-template", "--template",
		`{{range .info.runtimeSpec.linux.namespaces}}{{if eq .type "network"}}{{.path}}{{end}}{{end}}`, pod)
	if out == "" {
		t.Fatalf("pod %s has no netns path", pod)
	}
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
