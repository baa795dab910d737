package nri

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
)

// nicSlices stands in for a NIC driver's ResourceSlices: device name ->
// what its slice says (nil: the driver says it has no RDMA function).
type nicSlices map[string]*podinfo.NICAttributes

func (n nicSlices) NICAttributes(_ context.Context, dev podinfo.DRADevice) (podinfo.NICAttributes, error) {
	attrs, ok := n[dev.Device]
	switch {
	case !ok:
		return podinfo.NICAttributes{}, fmt.Errorf("DRA device %s: %w", dev, podinfo.ErrDRAUnknownDevice)
	case attrs == nil:
		return podinfo.NICAttributes{}, fmt.Errorf("DRA device %s: %w", dev, podinfo.ErrDRANotRDMA)
	}
	return *attrs, nil
}

func nicClaim(name string, devices ...string) podinfotest.Claim {
	claim := podinfotest.Claim{Namespace: "ml", Name: name}
	for _, d := range devices {
		claim.Devices = append(claim.Devices, podinfotest.ClaimDevice{Driver: podinfo.DefaultDRANICDriver, Pool: "n1", Device: d})
	}
	return claim
}

// newDRAPlugin is a plugin that completes DRA NICs (and, with cfg, does
// gpuAutoInject) against the test machine, the given kubelet and slices.
func newDRAPlugin(t *testing.T, cfg Config, root string, kubelet podinfo.Kubelet, nics nicSlices, gpus podinfo.DRASlices) (*Plugin, *podinfo.DRAHeld, *logBuffer) {
	t.Helper()
	m := testMachine(root)
	held := podinfo.NewDRAHeld()
	logs := &logBuffer{}
	src := &podinfo.GPUSource{Kubelet: kubelet, NICDrivers: []string{podinfo.DefaultDRANICDriver}, NICs: nics, DRA: gpus, Machine: fixed(m)}
	p, err := New(Options{Config: cfg, Machine: fixed(m), State: newFakeState(), GPUs: src, DRAHeld: held,
		Log: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return p, held, logs
}

// TestDRANICsCompleted: the containers whose claims hold a DRANet RDMA NIC
// get memlock and the NCCL/UCX variables naming exactly that NIC (with its
// port, and the GID index of the address the slice lists), never a device
// node (the driver injects them); other containers, non-RDMA NICs and
// NICs whose slice disagrees with the node get nothing.
func TestDRANICsCompleted(t *testing.T) {
	const (
		linkGID = "fe80:0000:0000:0000:0a00:27ff:fe00:0001"
		podGID  = "0000:0000:0000:0000:0000:ffff:0a38:0005" // ::ffff:10.56.0.5
	)
	root := t.TempDir()
	writeGIDs(t, root, "mlx5_1", []string{linkGID, podGID}, nil)
	nics := nicSlices{
		"pci-0000-31-00-0": {RDMADevice: "mlx5_1", IfName: "eth1", PCI: "0000:31:00.0", Addrs: []netip.Addr{netip.MustParseAddr("10.56.0.5")}},
		"pci-0000-33-00-0": {RDMADevice: "mlx5_3", IfName: "eth3", PCI: "0000:33:00.0"},
		"pci-0000-32-00-0": {RDMADevice: "mlx5_7", IfName: "eth2", PCI: "0000:32:00.0"}, // stale: the node has mlx5_2 there
		"net-gve":          nil,
	}
	_, kubelet := podinfotest.Kubelet(t, []podinfotest.Pod{{Namespace: "ml", Name: "p-s1", Containers: []podinfotest.Container{
		{Name: "trainer", Claims: []podinfotest.Claim{nicClaim("rdma", "pci-0000-31-00-0")}},
		{Name: "two", Claims: []podinfotest.Claim{nicClaim("rdma2", "pci-0000-31-00-0", "pci-0000-33-00-0")}},
		{Name: "own-env", Claims: []podinfotest.Claim{nicClaim("rdma", "pci-0000-31-00-0")}},
		{Name: "sidecar"},
		{Name: "plain", Claims: []podinfotest.Claim{nicClaim("gve", "net-gve")}},
		{Name: "stale", Claims: []podinfotest.Claim{nicClaim("stale", "pci-0000-32-00-0")}},
	}}})
	p, held, logs := newDRAPlugin(t, Config{Memlock: "8Mi"}, root, kubelet, nics, nil)
	sandbox := pod("s1", "ml", nil)
	if err := p.RunPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	<-p.kubelet.start(sandbox).done

	memlock := []string{"RLIMIT_MEMLOCK 8388608/8388608"}
	tests := []struct {
		ctr  string
		env  []string
		want summary
	}{
		{ctr: "trainer", want: summary{Rlimits: memlock, Env: map[string]string{
			envNCCLHCA: "=mlx5_1", envUCXDevices: "mlx5_1:1", envMCFilters: "mlx5_1", envNCCLGIDIndex: "1", envUCXGIDIndex: "1", envMCGIDIndex: "1", envNCCLSocketIf: "=eth0"}}},
		{ctr: "two", want: summary{Rlimits: memlock, Env: map[string]string{
			envNCCLHCA: "=mlx5_1,mlx5_3", envUCXDevices: "mlx5_1:1,mlx5_3:1", envMCFilters: "mlx5_1,mlx5_3", envNCCLSocketIf: "=eth0"}}},
		{ctr: "own-env", env: []string{envNCCLHCA + "=mlx5_9", envNCCLGIDIndex + "=3"}, want: summary{Rlimits: memlock, Env: map[string]string{
			envUCXDevices: "mlx5_1:1", envNCCLSocketIf: "=eth0"}}},
		{ctr: "sidecar", want: summary{Env: map[string]string{}}},
		{ctr: "plain", want: summary{Env: map[string]string{}}},
		{ctr: "stale", want: summary{Env: map[string]string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.ctr, func(t *testing.T) {
			adj, _, err := p.CreateContainer(t.Context(), sandbox, ctr(tt.ctr, tt.env...))
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(adj); got.String() != tt.want.String() {
				t.Fatalf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
	if !strings.Contains(logs.String(), "mlx5_7") || !strings.Contains(logs.String(), "does not resolve") {
		t.Errorf("the stale slice is not logged with the names it disagrees on: %s", logs.String())
	}

	got, ok := held.Pod("s1")
	if !ok || got.Namespace != "ml" || got.Name != "p-s1" || !slices.Equal(draNames(got.NICs), []string{"mlx5_1", "mlx5_3"}) {
		t.Fatalf("DRAHeld for s1 = %+v, %v; want ml/p-s1 holding mlx5_1, mlx5_3", got, ok)
	}
	one := got.NICs[0]
	if one.IfName != "eth1" || one.PCI != "0000:31:00.0" || one.Port != 1 || one.LinkLayer != "Ethernet" || one.Device.Claim != "ml/rdma" {
		t.Errorf("DRAHeld record = %+v", one)
	}
	if err := p.StopPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	if _, ok := held.Pod("s1"); ok {
		t.Fatal("StopPodSandbox left the pod's DRA NICs held (the driver takes them back)")
	}
}

// TestDRANICsNotAutoInjected: with gpuAutoInject on, a container whose
// claims hold GPUs and a DRA NIC gets no device node from rail (the NIC
// driver injects its NIC's; rail must not add the GPU's nearest NIC
// beside it), only memlock and the env of the claimed NIC.
func TestDRANICsNotAutoInjected(t *testing.T) {
	gpuClaimed := podinfotest.Claim{Namespace: "ml", Name: "gpus",
		Devices: []podinfotest.ClaimDevice{{Driver: podinfo.DefaultDRADriver, Pool: "n1", Device: "gpu-2"}}}
	_, kubelet := podinfotest.Kubelet(t, []podinfotest.Pod{{Namespace: "ml", Name: "p-s2", Containers: []podinfotest.Container{
		{Name: "both", Claims: []podinfotest.Claim{gpuClaimed, nicClaim("rdma", "pci-0000-31-00-0")}},
		{Name: "gpu-only", Claims: []podinfotest.Claim{gpuClaimed}},
	}}})
	nics := nicSlices{"pci-0000-31-00-0": {RDMADevice: "mlx5_1", PCI: "0000:31:00.0"}}
	cfg := Config{Memlock: "8Mi", GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}}
	p, _, _ := newDRAPlugin(t, cfg, t.TempDir(), kubelet, nics, draTable{"gpu-2": "0000:22:00.0"})
	sandbox := pod("s2", "ml", nil)
	if err := p.RunPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	<-p.kubelet.start(sandbox).done
	both, _, _ := p.CreateContainer(t.Context(), sandbox, ctr("both"))
	if got := summarize(both); len(got.Devices) != 0 || got.Env[envNCCLHCA] != "=mlx5_1" || len(got.Rlimits) != 1 {
		t.Fatalf("GPU + DRA NIC container: %v; want no device, memlock, NCCL_IB_HCA==mlx5_1", got)
	}
	gpuOnly, _, _ := p.CreateContainer(t.Context(), sandbox, ctr("gpu-only"))
	if got := summarize(gpuOnly); len(got.Devices) == 0 || got.Env[envNCCLHCA] != "=mlx5_2" {
		t.Fatalf("GPU-only container: %v; want gpuAutoInject's mlx5_2 with its devices", got)
	}
}

// draKubelet answers ContainerGPUs from a table: "ns/name" -> container -> devices.
type draKubelet map[string]map[string]podinfo.Devices

func (k draKubelet) ContainerGPUs(_ context.Context, ns, name string, _ []string) (map[string]podinfo.Devices, error) {
	if pod, ok := k[ns+"/"+name]; ok {
		return pod, nil
	}
	return nil, fmt.Errorf("pod %s/%s: %w", ns, name, podinfo.ErrPodNotFound)
}

func (draKubelet) PodGPUs(context.Context, string, string, []string) (podinfo.Devices, error) {
	return podinfo.Devices{}, nil
}

// BenchmarkCreateContainerDRA is the hook with DRA NIC completion on: a
// container holding a DRANet RoCE NIC (its GID index found on the first
// call, then cached), and a pod holding nothing (what completion costs
// every other pod's containers). Run with -benchtime=10000x for the p99.
func BenchmarkCreateContainerDRA(b *testing.B) {
	nicDev := podinfo.DRADevice{Driver: podinfo.DefaultDRANICDriver, Pool: "n1", Device: "pci-0000-31-00-0", Claim: "ml/rdma"}
	kubelet := draKubelet{"ml/p-s1": {"app": {DRA: []podinfo.DRADevice{nicDev}}}, "ml/p-s2": {}}
	nics := nicSlices{"pci-0000-31-00-0": {RDMADevice: "mlx5_1", PCI: "0000:31:00.0", Addrs: []netip.Addr{netip.MustParseAddr("10.56.0.5")}}}
	for _, c := range []struct{ name, sandbox string }{{"dra-nic-gid-cached", "s1"}, {"dra-on-no-claim", "s2"}} {
		b.Run(c.name, func(b *testing.B) {
			root := b.TempDir()
			writeGIDs(b, root, "mlx5_1", []string{"fe80:0000:0000:0000:0a00:27ff:fe00:0001",
				"0000:0000:0000:0000:0000:ffff:0a38:0005"}, []string{"RoCE v2", "RoCE v2"})
			m := testMachine(root)
			src := &podinfo.GPUSource{Kubelet: kubelet, NICDrivers: []string{podinfo.DefaultDRANICDriver}, NICs: nics, Machine: fixed(m)}
			p, err := New(Options{Machine: fixed(m), State: newFakeState(), GPUs: src, DRAHeld: podinfo.NewDRAHeld(),
				Hooks: metrics.New().NRIHooks, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			sandbox := pod(c.sandbox, "ml", nil)
			if err := p.RunPodSandbox(b.Context(), sandbox); err != nil {
				b.Fatal(err)
			}
			<-p.kubelet.start(sandbox).done
			container := ctr("app", "PATH=/bin")
			samples := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				_, _, err := p.CreateContainer(b.Context(), sandbox, container)
				samples = append(samples, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			slices.Sort(samples)
			b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}
