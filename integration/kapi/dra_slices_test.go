package kapi_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/railcni/rail/daemon/draslices"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

const (
	draNode    = "dra-node-1"
	draDriver  = "gpu.nvidia.com"
	draMachine = "h100x8-cx7x4"
	draMIG     = "MIG-0c4f1a52-7b1d-5e3a-8f6c-1d2e3f4a5b6c"
)

// draAttrs are the attributes NVIDIA's GPU DRA driver publishes for a GPU
// (its PCI bus ID in nvidia-smi's form) or a MIG device (with parentUUID).
func draAttrs(pairs ...string) map[resourcev1.QualifiedName]resourcev1.DeviceAttribute {
	out := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v := pairs[i+1]
		out[resourcev1.QualifiedName(pairs[i])] = resourcev1.DeviceAttribute{StringValue: &v}
	}
	return out
}

func nvidiaBusID(pci string) string { return "0000" + strings.ToUpper(pci) }

// nodeGPUSlice is this node's slice: gpu-<i> for every GPU of the fake
// machine, and one MIG device of GPU 2.
func nodeGPUSlice(spec *fakesys.Spec) *resourcev1.ResourceSlice {
	node := draNode
	var devices []resourcev1.Device
	for _, g := range spec.GPUs {
		devices = append(devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", g.Index), Attributes: draAttrs(
			"type", "gpu", "uuid", g.UUID, "pcieBusID", nvidiaBusID(g.PCI),
			"resource.kubernetes.io/pcieRoot", "pci"+g.PCI[:4]+":"+g.PCI[5:7])})
	}
	mig := spec.GPUs[2]
	devices = append(devices, resourcev1.Device{Name: "gpu-2-mig-19-0-1", Attributes: draAttrs(
		"type", "mig", "uuid", draMIG, "parentUUID", mig.UUID, "pcieBusID", nvidiaBusID(mig.PCI))})
	return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: draNode + "-gpu"},
		Spec: resourcev1.ResourceSliceSpec{Driver: draDriver, NodeName: &node, Devices: devices,
			Pool: resourcev1.ResourcePool{Name: draNode, Generation: 1, ResourceSliceCount: 1}}}
}

// decoySlices must never be read: another node's slice and an all-nodes
// slice that reuse this node's pool name, mapping gpu-4 to GPU 0.
func decoySlices(spec *fakesys.Spec) []*resourcev1.ResourceSlice {
	other, all := "dra-node-2", true
	decoy := []resourcev1.Device{{Name: "gpu-4", Attributes: draAttrs("uuid", spec.GPUs[0].UUID, "pcieBusID", nvidiaBusID(spec.GPUs[0].PCI))}}
	return []*resourcev1.ResourceSlice{
		{ObjectMeta: metav1.ObjectMeta{Name: "other-node-gpu"}, Spec: resourcev1.ResourceSliceSpec{Driver: draDriver, NodeName: &other,
			Devices: decoy, Pool: resourcev1.ResourcePool{Name: draNode, Generation: 5, ResourceSliceCount: 1}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "fabric-gpu"}, Spec: resourcev1.ResourceSliceSpec{Driver: draDriver, AllNodes: &all,
			Devices: decoy, Pool: resourcev1.ResourcePool{Name: draNode, Generation: 7, ResourceSliceCount: 1}}},
	}
}

func claimPod(name string, ids []string, devices ...string) podinfotest.Pod {
	claim := podinfotest.Claim{Namespace: "default", Name: name + "-gpus"}
	for _, d := range devices {
		claim.Devices = append(claim.Devices, podinfotest.ClaimDevice{Driver: draDriver, Pool: draNode, Device: d,
			CDI: []string{"k8s.gpu.nvidia.com/device=" + d}})
	}
	ctr := podinfotest.Container{Name: "main"}
	if len(ids) > 0 {
		ctr.Devices = map[string][]string{"nvidia.com/gpu": ids}
	}
	if len(devices) > 0 {
		ctr.Claims = []podinfotest.Claim{claim}
	}
	return podinfotest.Pod{Namespace: "default", Name: name, Containers: []podinfotest.Container{ctr}}
}

// draService is raild's service over the fake machine, asking the kubelet
// stub for pods and the given slices for DRA devices.
func draService(t *testing.T, root string, pods []podinfotest.Pod, slices podinfo.DRASlices) *service.Service {
	t.Helper()
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	_, client := podinfotest.Kubelet(t, pods)
	p, err := ipam.NewPools([]ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/24"}}, draNode)
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := ipam.Open(filepath.Join(t.TempDir(), "leases.db"), p, ipam.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alloc.Close() })
	live := func() *topology.Machine { return m }
	svc, err := service.New(service.Options{Machine: live, Alloc: alloc, GPUs: &podinfo.GPUSource{
		Kubelet: client, DRA: slices, Resources: []string{"nvidia.com/gpu"}, Machine: live}})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func startSlices(t *testing.T, clients *kubeclient.Clients, wait time.Duration) *draslices.Slices {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	slices, err := draslices.Start(ctx, clients, draslices.Options{Node: draNode, Wait: wait})
	if err != nil {
		t.Fatal(err)
	}
	return slices
}
