package nri

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// testMachine is a node with GPU i sharing a PCIe switch with mlx5_i
// (i = 0..3), IB-style umad/issm nodes (mlx5_1 has no issm), and one
// NIC whose sysfs data names a block device, which must never be injected.
func testMachine(root string) *topology.Machine {
	m := &topology.Machine{
		Root:   root,
		RdmaCM: &topology.CharDev{Name: "rdma_cm", Path: "/dev/infiniband/rdma_cm", Major: 10, Minor: 58},
	}
	for i := 0; i < 4; i++ {
		sw := fmt.Sprintf("0000:%02x:00.0", 0x10+i)
		path := []string{"0000:00:01.0", sw, fmt.Sprintf("0000:%02x:01.0", 0x10+i)}
		m.GPUs = append(m.GPUs, topology.GPU{
			Index: i, PCI: fmt.Sprintf("0000:%02x:00.0", 0x20+i), UUID: fmt.Sprintf("GPU-0000000%d-aaaa-bbbb-cccc-dddddddddddd", i),
			Minor: i, NUMA: i / 2, Root: "pci0000:00", Path: slices.Clone(path),
		})
		nic := topology.NIC{
			Name: fmt.Sprintf("mlx5_%d", i), PCI: fmt.Sprintf("0000:%02x:00.0", 0x30+i), NUMA: i / 2,
			State: "ACTIVE", LinkLayer: "Ethernet", Root: "pci0000:00", Netdev: fmt.Sprintf("eth%d", i),
			Path:   []string{"0000:00:01.0", sw, fmt.Sprintf("0000:%02x:02.0", 0x10+i)},
			Uverbs: charDev("uverbs", i, 231, uint32(192+i)),
			Ports: []topology.Port{{
				Num: 1, State: "ACTIVE", LinkLayer: "Ethernet", Netdevs: []string{fmt.Sprintf("eth%d", i)},
				Umad: charDev("umad", i, 231, uint32(i)),
				Issm: charDev("issm", i, 231, uint32(64+i)),
			}},
		}
		if i == 1 {
			nic.Ports[0].Issm = nil
		}
		m.NICs = append(m.NICs, nic)
	}
	m.NICs = append(m.NICs, topology.NIC{
		Name: "mlx5_bad", State: "DOWN",
		Uverbs: &topology.CharDev{Name: "sda", Path: "/dev/sda", Major: 8, Minor: 0},
		Ports:  []topology.Port{{Num: 1, State: "DOWN"}},
	})
	return m
}

func charDev(kind string, i int, major, minor uint32) *topology.CharDev {
	name := fmt.Sprintf("%s%d", kind, i)
	return &topology.CharDev{Name: name, Path: "/dev/infiniband/" + name, Major: major, Minor: minor}
}

// fakeState is an in-memory lease table that records releases.
type fakeState struct {
	mu       sync.Mutex
	leases   map[string][]ipam.Lease
	released []string
	notify   chan string
	err      error
}

func newFakeState() *fakeState {
	return &fakeState{leases: map[string][]ipam.Lease{}, notify: make(chan string, 16)}
}

func (f *fakeState) SandboxLeases(sandbox string) []ipam.Lease {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leases[sandbox]
}

func (f *fakeState) ReleaseSandbox(_ context.Context, sandbox string) error {
	f.mu.Lock()
	f.released = append(f.released, sandbox)
	delete(f.leases, sandbox)
	err := f.err
	f.mu.Unlock()
	f.notify <- sandbox
	return err
}

// NICMovedTo answers from the leases, as the service's usage table does.
func (f *fakeState) NICMovedTo(nic string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for sandbox, leases := range f.leases {
		for _, l := range leases {
			if api.Mode(l.Mode).Exclusive() && slices.Contains(l.NICs, nic) {
				return sandbox, true
			}
		}
	}
	return "", false
}

func (f *fakeState) add(sandbox string, mode api.Mode, addr string, nics ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.leases[sandbox])
	f.leases[sandbox] = append(f.leases[sandbox], ipam.Lease{
		Sandbox: sandbox, IfName: fmt.Sprintf("rail%d", n), Pool: "p", Address: netip.MustParsePrefix(addr), NICs: nics, Mode: string(mode),
	})
}

func (f *fakeState) releasedList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.released)
}

// logBuffer is a goroutine-safe slog sink for asserting on log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// records returns the logged records whose message starts with msg.
func (l *logBuffer) records(t testing.TB, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m, _ := rec["msg"].(string); strings.HasPrefix(m, msg) {
			out = append(out, rec)
		}
	}
	return out
}

func newTestPlugin(t testing.TB, cfg Config, root string, st State) (*Plugin, *logBuffer) {
	t.Helper()
	return newKubeletPlugin(t, cfg, root, st, nil)
}

// fixed is a machine that never changes, as Options.Machine reads it.
func fixed(m *topology.Machine) func() *topology.Machine {
	return func() *topology.Machine { return m }
}

// newPlugin is New on a machine that never changes; gpus (nil: none)
// resolves against the same machine.
func newPlugin(cfg Config, m *topology.Machine, st State, gpus *podinfo.GPUSource, log *slog.Logger) (*Plugin, error) {
	if gpus != nil && gpus.Machine == nil {
		gpus.Machine = fixed(m)
	}
	opt := Options{Config: cfg, Machine: fixed(m), State: st, GPUs: gpus, Log: log}
	if m != nil {
		opt.Proc = filepath.Join(m.Root, "proc") // never the host's: the tests' pids are made up
	}
	return New(opt)
}

// newKubeletPlugin is newTestPlugin with a GPU source for gpuAutoInject.
func newKubeletPlugin(t testing.TB, cfg Config, root string, st State, gpus *podinfo.GPUSource) (*Plugin, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	p, err := newPlugin(cfg, testMachine(root), st, gpus, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, logs
}

// summary is an adjustment reduced to what the tests compare.
type summary struct {
	Devices []string          // "/dev/infiniband/uverbs0 c 231:192 0666"
	Rlimits []string          // "RLIMIT_MEMLOCK 8388608/8388608"
	Env     map[string]string // added variables
}

func summarize(adj *nriapi.ContainerAdjustment) summary {
	s := summary{Env: map[string]string{}}
	if adj == nil {
		return s
	}
	for _, d := range adj.GetLinux().GetDevices() {
		mode := "-"
		if d.FileMode != nil {
			mode = fmt.Sprintf("%04o", d.FileMode.Get().Perm())
		}
		s.Devices = append(s.Devices, fmt.Sprintf("%s %s %d:%d %s", d.Path, d.Type, d.Major, d.Minor, mode))
	}
	for _, r := range adj.GetRlimits() {
		s.Rlimits = append(s.Rlimits, fmt.Sprintf("%s %d/%d", r.Type, r.Hard, r.Soft))
	}
	for _, kv := range adj.GetEnv() {
		s.Env[kv.Key] = kv.Value
	}
	return s
}

func (s summary) String() string {
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k+"="+s.Env[k])
	}
	sort.Strings(keys)
	return fmt.Sprintf("devices=%v rlimits=%v env=%v", s.Devices, s.Rlimits, strings.Join(keys, " "))
}

func dev(name string, major, minor int) string {
	return fmt.Sprintf("/dev/infiniband/%s c %d:%d 0666", name, major, minor)
}

func pod(id, ns string, annotations map[string]string) *nriapi.PodSandbox {
	return &nriapi.PodSandbox{Id: id, Name: "p-" + id, Namespace: ns, Annotations: annotations}
}

func ctr(name string, env ...string) *nriapi.Container {
	return &nriapi.Container{Id: "c-" + name, Name: name, Env: env}
}
