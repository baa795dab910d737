// Package dradriver is a small test DRA NIC driver (not DRANet): for a
// machine as raild's topology reads it (a fakesys folder), it publishes
// the node's ResourceSlice the way DRANet publishes one — driver dra.net,
// pool named after the node, a device per PCI function named
// pci-<domain>-<bus>-<dev>-<fn>, the attributes dra.net/ifName,
// dra.net/pciAddress, dra.net/rdma, dra.net/rdmaDevice, dra.net/numaNode,
// dra.net/ipv4 and resource.kubernetes.io/pcieRoot — plus a virtual NIC
// without RDMA, which raild must leave alone. Tests pair it with the
// kubelet stand-in (daemon/podinfo/podinfotest), which reports the claims.
package dradriver

import (
	"context"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/railcni/rail/pkg/topology"
)

// Driver is the driver name DRANet publishes under.
const Driver = "dra.net"

// VirtualDevice is the non-RDMA device every slice lists (a virtual NIC).
const VirtualDevice = "gve0"

// Options say what to publish beside the machine's NICs.
type Options struct {
	// Node is the node the slice belongs to (its pool's name too).
	Node string
	// Addrs are the addresses on each RDMA device's netdev, published as
	// dra.net/ipv4 ("10.56.0.5/24").
	Addrs map[string][]string
	// Generation is the pool's generation (0: 1).
	Generation int64
}

// DeviceName is DRANet's name for the device at a PCI address.
func DeviceName(pci string) string {
	return "pci-" + strings.NewReplacer(":", "-", ".", "-").Replace(pci)
}

// Slice is the node's ResourceSlice for the NICs of m: one device per PCI
// function (its first port's netdev), in the order m lists them.
func Slice(m *topology.Machine, opt Options) *resourcev1.ResourceSlice {
	gen := opt.Generation
	if gen == 0 {
		gen = 1
	}
	node := opt.Node
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + Driver},
		Spec: resourcev1.ResourceSliceSpec{Driver: Driver, NodeName: &node,
			Pool: resourcev1.ResourcePool{Name: node, Generation: gen, ResourceSliceCount: 1}},
	}
	seen := map[string]bool{}
	for _, n := range m.NICs {
		if n.PCI == "" || seen[n.PCI] {
			continue
		}
		seen[n.PCI] = true
		slice.Spec.Devices = append(slice.Spec.Devices, nicDevice(n, opt.Addrs[n.RDMADevice()]))
	}
	virtual := device(VirtualDevice, false)
	setString(virtual, "ifName", VirtualDevice)
	slice.Spec.Devices = append(slice.Spec.Devices, virtual)
	return slice
}

func nicDevice(n topology.NIC, addrs []string) resourcev1.Device {
	d := device(DeviceName(n.PCI), true)
	setString(d, "pciAddress", n.PCI)
	setString(d, "rdmaDevice", n.RDMADevice())
	if n.Netdev != "" {
		setString(d, "ifName", n.Netdev)
	}
	if len(addrs) > 0 {
		setString(d, "ipv4", strings.Join(addrs, ","))
	}
	numa := int64(n.NUMA)
	d.Attributes[Driver+"/numaNode"] = resourcev1.DeviceAttribute{IntValue: &numa}
	if n.Root != "" {
		root := n.Root
		d.Attributes["resource.kubernetes.io/pcieRoot"] = resourcev1.DeviceAttribute{StringValue: &root}
	}
	return d
}

func device(name string, rdma bool) resourcev1.Device {
	return resourcev1.Device{Name: name, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		Driver + "/rdma": {BoolValue: &rdma},
	}}
}

func setString(d resourcev1.Device, name, value string) {
	d.Attributes[resourcev1.QualifiedName(Driver+"/"+name)] = resourcev1.DeviceAttribute{StringValue: &value}
}

// Publish creates the slice, or replaces it when it exists.
func Publish(ctx context.Context, client kubernetes.Interface, slice *resourcev1.ResourceSlice) error {
	slices := client.ResourceV1().ResourceSlices()
	_, err := slices.Create(ctx, slice, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		old, getErr := slices.Get(ctx, slice.Name, metav1.GetOptions{})
		if getErr != nil {
			return fmt.Errorf("publish ResourceSlice %s: %w", slice.Name, getErr)
		}
		slice = slice.DeepCopy()
		slice.ResourceVersion = old.ResourceVersion
		_, err = slices.Update(ctx, slice, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("publish ResourceSlice %s: %w", slice.Name, err)
	}
	return nil
}
