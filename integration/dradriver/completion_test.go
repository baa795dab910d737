package dradriver_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	nriapi "github.com/containerd/nri/pkg/api"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/daemon/draslices"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/integration/dradriver"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

const node = "node-a"

// rig is raild's pieces wired as raild serve wires them, on a fake
// machine: the test driver's slices in a fake API server, the kubelet
// stand-in, the service (placement) and the NRI plugin sharing one table.
type rig struct {
	m    *topology.Machine
	svc  *service.Service
	nri  *nri.Plugin
	held *podinfo.DRAHeld
}

func newRig(t *testing.T, root string, pods []podinfotest.Pod, addrs map[string][]string) *rig {
	t.Helper()
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(dradriver.Slice(m, dradriver.Options{Node: node, Addrs: addrs}))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	slices, err := draslices.Start(ctx, &kubeclient.Clients{Kube: client, Watch: client},
		draslices.Options{Node: node, NICDrivers: []string{dradriver.Driver}, Wait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, kubelet := podinfotest.Kubelet(t, pods)
	machine := func() *topology.Machine { return m }
	src := &podinfo.GPUSource{Kubelet: kubelet, NICDrivers: []string{dradriver.Driver}, NICs: slices, DRA: slices, Machine: machine}
	pools, err := ipam.NewPools([]ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/24"}}, node)
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := ipam.Open(filepath.Join(t.TempDir(), "leases.db"), pools, ipam.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alloc.Close() })
	held := podinfo.NewDRAHeld()
	svc, err := service.New(service.Options{Machine: machine, Alloc: alloc, GPUs: src, DRAHeld: held,
		Rails: map[string]int{}, NetnsExists: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	plugin, err := nri.New(nri.Options{Config: nri.Config{Memlock: "8Mi"}, Machine: machine, State: svc, GPUs: src,
		DRAHeld: held, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{m: m, svc: svc, nri: plugin, held: held}
}

// started runs RunPodSandbox and waits until the pod's lookup is recorded.
func (r *rig) started(t *testing.T, sandbox *nriapi.PodSandbox, wantNICs int) {
	t.Helper()
	if err := r.nri.RunPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pod, _ := r.held.Pod(sandbox.GetId())
		if len(pod.NICs) == wantNICs {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: %d DRA NICs recorded, want %d", sandbox.GetName(), len(pod.NICs), wantNICs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDRANetPodCompleted: on a node with a RoCE dual-port mlx4_1 and IB
// NICs, a pod whose container holds the test driver's claim on mlx4_1
// (its netdev ens2, the first port) gets, from raild's NRI hook, memlock
// and NCCL_IB_HCA/UCX_NET_DEVICES naming exactly that port, the GID index
// of the address the slice lists, and no device node (the driver injects
// them); its other container gets nothing. While the claim holds the NIC,
// rail's own placement gives another pod whose GPU is closest to mlx4_1
// some other NIC, in move mode and child mode alike; once the pod stopped
// the NIC is rail's again.
func TestDRANetPodCompleted(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "dualport-2s", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	// ::ffff:10.56.0.5 at index 1 of mlx4_1's first port, as the kernel
	// lists a RoCE v2 GID of an IPv4 address
	if err := fakesys.WriteGIDs(root, "mlx4_1", 1, []string{"fe80:0000:0000:0000:0202:c9ff:fe00:0001",
		"0000:0000:0000:0000:0000:ffff:0a38:0005"}, []string{"IB/RoCE v1", "RoCE v2"}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	var pci string
	for _, n := range m.NICs {
		if n.Name == "mlx4_1" {
			pci = n.PCI
		}
	}
	gpu := -1
	for g, nic := range m.Affinity() {
		if nic == "mlx4_1" {
			gpu = g
		}
	}
	if pci == "" || gpu < 0 {
		t.Fatalf("machine without mlx4_1 or a GPU closest to it: %v", m.Affinity())
	}
	claim := podinfotest.Claim{Namespace: "ml", Name: "trainer-rdma", Devices: []podinfotest.ClaimDevice{
		{Driver: dradriver.Driver, Pool: node, Device: dradriver.DeviceName(pci)},
		{Driver: dradriver.Driver, Pool: node, Device: dradriver.VirtualDevice}}}
	pods := []podinfotest.Pod{
		{Namespace: "ml", Name: "trainer", Containers: []podinfotest.Container{{Name: "nccl", Claims: []podinfotest.Claim{claim}}, {Name: "sidecar"}}},
		{Namespace: "ml", Name: "rail-pod", Containers: []podinfotest.Container{{Name: "app"}}},
	}
	r := newRig(t, root, pods, map[string][]string{"mlx4_1": {"10.56.0.5/24"}})
	trainer := &nriapi.PodSandbox{Id: "sb-trainer", Name: "trainer", Namespace: "ml"}
	r.started(t, trainer, 1)

	adj, _, err := r.nri.CreateContainer(t.Context(), trainer, &nriapi.Container{Id: "c1", Name: "nccl"})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range adj.GetEnv() {
		env[kv.Key] = kv.Value
	}
	// The engines' variables beside NCCL's (docs/environment.md): UCX's and
	// Mooncake's GID index equal NCCL's, Mooncake's filter the same device.
	want := map[string]string{"NCCL_IB_HCA": "=mlx4_1:1", "UCX_NET_DEVICES": "mlx4_1:1", "NCCL_IB_GID_INDEX": "1", "NCCL_SOCKET_IFNAME": "=eth0",
		"UCX_IB_GID_INDEX": "1", "MC_GID_INDEX": "1", "MC_MS_FILTERS": "mlx4_1"}
	if fmt.Sprint(env) != fmt.Sprint(want) {
		t.Errorf("env = %v, want %v", env, want)
	}
	if devs := adj.GetLinux().GetDevices(); len(devs) != 0 {
		t.Errorf("raild injected %d device nodes; the NIC driver injects them", len(devs))
	}
	if rl := adj.GetRlimits(); len(rl) != 1 || rl[0].Type != "RLIMIT_MEMLOCK" || rl[0].Hard != 8<<20 {
		t.Errorf("rlimits = %v, want RLIMIT_MEMLOCK 8Mi", rl)
	}
	if side, _, _ := r.nri.CreateContainer(t.Context(), trainer, &nriapi.Container{Id: "c2", Name: "sidecar"}); side != nil {
		t.Errorf("the container without the claim was adjusted: %v", side)
	}
	pod, _ := r.svc.DRANICs("sb-trainer")
	if len(pod.NICs) != 1 || pod.NICs[0].NIC != "mlx4_1" || pod.NICs[0].IfName != "ens2" || pod.NICs[0].Port != 1 ||
		pod.NICs[0].LinkLayer != topology.Ethernet || pod.NICs[0].PCI != pci {
		t.Errorf("the pod's DRA NICs for the readiness checks = %+v", pod)
	}

	for i, mode := range []api.Mode{api.ModeMove, api.ModeMacvlan} {
		plan, err := r.svc.Allocate(t.Context(), api.AllocateRequest{Sandbox: fmt.Sprintf("sb-rail-%d", i), CNIIfName: "eth0",
			Network: "net", Mode: mode, Chained: true, PodNamespace: "ml", PodName: "rail-pod",
			Annotations: map[string]string{api.AnnotationGPUs: fmt.Sprint(gpu)}})
		if err != nil {
			t.Fatalf("%s: Allocate: %v", mode, err)
		}
		for _, iface := range plan.Interfaces {
			if iface.NIC != nil && target(iface.NIC) == "mlx4_1" {
				t.Fatalf("%s: rail placed the NIC the DRA claim holds: %+v", mode, plan.Interfaces)
			}
		}
		if err := r.svc.ReleaseSandbox(t.Context(), plan.Sandbox); err != nil {
			t.Fatalf("release: %v", err)
		}
	}

	if err := r.nri.StopPodSandbox(t.Context(), trainer); err != nil {
		t.Fatal(err)
	}
	plan, err := r.svc.Allocate(t.Context(), api.AllocateRequest{Sandbox: "sb-rail-after", CNIIfName: "eth0", Network: "net",
		Mode: api.ModeMove, Chained: true, PodNamespace: "ml", PodName: "rail-pod",
		Annotations: map[string]string{api.AnnotationGPUs: fmt.Sprint(gpu)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Interfaces) != 1 || plan.Interfaces[0].NIC == nil || target(plan.Interfaces[0].NIC) != "mlx4_1" {
		t.Errorf("after the claim's pod stopped, GPU %d's own NIC mlx4_1 is not rail's again: %+v", gpu, plan.Interfaces)
	}
}

// target names a planned NIC as the topology does (mlx4_1, mlx4_1:2).
func target(n *api.NIC) string {
	if n.Port > 1 {
		return fmt.Sprintf("%s:%d", n.RDMADevice, n.Port)
	}
	return n.RDMADevice
}
