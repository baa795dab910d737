package dradriver

import (
	"strconv"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/railcni/rail/pkg/topology"
)

// GPUDriver is the driver NVIDIA's DRA driver publishes GPUs under.
const GPUDriver = "gpu.nvidia.com"

// GPUSlice is a stand-in for NVIDIA's DRA driver: the node's
// ResourceSlice of m's GPUs, one device gpu-<index> each, with the
// attributes that driver publishes (index, uuid, productName, type,
// pcieBusID in its domain) and the standard resource.kubernetes.io/pcieRoot
// and pciBusID, plus resource.kubernetes.io/numaNode, the name Rail's
// driver aligns NICs on where PCIe roots never match.
func GPUSlice(m *topology.Machine, node string) *resourcev1.ResourceSlice {
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + GPUDriver},
		Spec: resourcev1.ResourceSliceSpec{Driver: GPUDriver, NodeName: &node,
			Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}},
	}
	for _, g := range m.GPUs {
		index, numa := int64(g.Index), int64(g.NUMA)
		if g.C2C && g.CPUNode >= 0 {
			numa = int64(g.CPUNode) // a Grace GPU's memory node has no CPUs: its socket's
		}
		d := resourcev1.Device{Name: "gpu-" + strconv.Itoa(g.Index), Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			GPUDriver + "/index":              {IntValue: &index},
			GPUDriver + "/type":               {StringValue: ptr("gpu")},
			GPUDriver + "/uuid":               {StringValue: ptr(g.UUID)},
			GPUDriver + "/productName":        {StringValue: ptr("NVIDIA H100 80GB HBM3")},
			GPUDriver + "/pcieBusID":          {StringValue: ptr(g.PCI)},
			"resource.kubernetes.io/pciBusID": {StringValue: ptr(g.PCI)},
		}}
		if g.Root != "" {
			d.Attributes["resource.kubernetes.io/pcieRoot"] = resourcev1.DeviceAttribute{StringValue: ptr(g.Root)}
		}
		if numa >= 0 {
			d.Attributes["resource.kubernetes.io/numaNode"] = resourcev1.DeviceAttribute{IntValue: &numa}
		}
		slice.Spec.Devices = append(slice.Spec.Devices, d)
	}
	return slice
}

func ptr(s string) *string { return &s }
