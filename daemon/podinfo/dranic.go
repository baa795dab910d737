package podinfo

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/railcni/rail/pkg/topology"
)

// DefaultDRANICDriver is the DRA driver name of DRANet, the NIC driver
// raild completes by default.
const DefaultDRANICDriver = "dra.net"

// ErrDRANotRDMA: the NIC driver's slice says the device has no RDMA
// function (a plain netdev claim): nothing for raild to complete.
var ErrDRANotRDMA = errors.New("DRA NIC has no RDMA device")

// NICAttributes is what a NIC driver's ResourceSlice says of one device.
type NICAttributes struct {
	// RDMADevice is the kernel's RDMA device name (mlx5_0), "" when the
	// slice does not say.
	RDMADevice string
	// IfName is the netdev the driver names for the device (DRANet: the
	// host's name; it keeps it in the pod unless the claim renames it).
	IfName string
	// PCI is the device's PCI address as published.
	PCI string
	// Addrs are the addresses the slice lists on the netdev (the driver
	// moves them into the pod with it).
	Addrs []netip.Addr
}

// DRANICSlices reads NIC drivers' devices from the node's ResourceSlices
// (daemon/draslices implements it).
type DRANICSlices interface {
	// NICAttributes is the slice's view of a NIC driver's device. Errors
	// wrap ErrDRANotSynced (a later call may succeed), ErrDRAUnknownDevice
	// or ErrDRANotRDMA.
	NICAttributes(ctx context.Context, dev DRADevice) (NICAttributes, error)
}

// DRANIC is one RDMA port a DRA NIC driver gave a pod, resolved against
// the node's topology: the typed record the NRI hook, placement and the
// readiness checks read.
type DRANIC struct {
	// Device is the claim's device (driver, pool, device, claim).
	Device DRADevice
	// NIC is the port as raild's topology names it (mlx5_0, mlx4_0:2).
	NIC string
	// RDMADevice and Port are the RDMA device and its port number.
	RDMADevice string
	Port       int
	// IfName is the netdev name the driver publishes (see NICAttributes).
	IfName string
	// PCI is the PCI function, as the topology writes it.
	PCI string
	// LinkLayer is the port's link layer (RoCE: Ethernet).
	LinkLayer topology.LinkLayer
	// Addrs are the netdev's addresses the slice lists (for the GID index).
	Addrs []netip.Addr
}

// GIDAddress is the address whose GID index NCCL needs (the containers'
// NCCL_IB_GID_INDEX is worked out from it): the first IPv4 address the
// slice lists, else the first global IPv6 one.
func (n DRANIC) GIDAddress() (netip.Addr, bool) {
	for _, a := range n.Addrs {
		if a.Is4() {
			return a, true
		}
	}
	for _, a := range n.Addrs {
		if a.Is6() && !a.IsLinkLocalUnicast() {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// NICDevices keeps the DRA devices of the given NIC drivers; nil drivers
// keep none (completion of DRA NICs is off).
func NICDevices(devices []DRADevice, drivers []string) []DRADevice {
	return ofDrivers(devices, drivers)
}

// ofDrivers keeps the devices whose driver is listed.
func ofDrivers(devices []DRADevice, drivers []string) []DRADevice {
	var out []DRADevice
	for _, d := range devices {
		if slices.Contains(drivers, d.Driver) {
			out = append(out, d)
		}
	}
	return out
}

// ResolveNICs maps NIC drivers' devices to the node's RDMA ports: the
// slice names the PCI function (and the RDMA device), the topology of m
// says which ports that function has, their link layer and whether the
// RDMA device the slice names is really there. A device without RDMA is
// skipped; every other device that does not resolve is returned with why.
func ResolveNICs(ctx context.Context, m *topology.Machine, devices []DRADevice, dra DRANICSlices) ([]DRANIC, []Unresolved) {
	var nics []DRANIC
	var failed []Unresolved
	for _, dev := range devices {
		if dra == nil {
			failed = append(failed, Unresolved{ID: dev.String(), Err: fmt.Errorf("DRA device %s (claim %s): raild has no API server "+
				"connection to read the node's ResourceSlices; give raild one (its kubernetes config)", dev, dev.Claim)})
			continue
		}
		attrs, err := dra.NICAttributes(ctx, dev)
		if errors.Is(err, ErrDRANotRDMA) {
			continue
		}
		if err == nil {
			var found []DRANIC
			found, err = nicPorts(m, dev, attrs)
			nics = append(nics, found...)
		}
		if err != nil {
			failed = append(failed, Unresolved{ID: dev.String(), Err: err})
		}
	}
	return nics, failed
}

// nicPorts cross-checks a slice's device with the topology by PCI address:
// the ports of that PCI function, or the one port whose netdev the slice
// names while the host still shows it (a dual-port function with a netdev
// per port, before the driver moved it).
func nicPorts(m *topology.Machine, dev DRADevice, attrs NICAttributes) ([]DRANIC, error) {
	pci, ok := normalizePCI(strings.ToLower(strings.TrimSpace(attrs.PCI)))
	if !ok {
		return nil, fmt.Errorf("DRA device %s (claim %s): its ResourceSlice gives no usable PCI address (%q); "+
			"a NIC driver must publish resource.kubernetes.io/pciBusID or %s/pciAddress", dev, dev.Claim, attrs.PCI, dev.Driver)
	}
	var out []DRANIC
	for _, n := range m.NICs {
		if known, ok := normalizePCI(strings.ToLower(n.PCI)); !ok || known != pci {
			continue
		}
		if attrs.RDMADevice != "" && n.RDMADevice() != attrs.RDMADevice {
			return nil, fmt.Errorf("DRA device %s (claim %s): its ResourceSlice names RDMA device %s at PCI %s, but this node has %s there; "+
				"the driver's slice is stale or wrong: check kubectl get resourceslices -o yaml", dev, dev.Claim, attrs.RDMADevice, pci, n.RDMADevice())
		}
		out = append(out, DRANIC{Device: dev, NIC: n.Name, RDMADevice: n.RDMADevice(), Port: n.PortNum(), IfName: attrs.IfName,
			PCI: n.PCI, LinkLayer: n.LinkLayer, Addrs: slices.Clone(attrs.Addrs)})
		if attrs.IfName != "" && hasNetdev(n, attrs.IfName) {
			return out[len(out)-1:], nil // the netdev the driver names is this port's: this port alone
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("DRA device %s (claim %s): no RDMA device at PCI %s on this node (RDMA device %q by the slice); "+
			"in exclusive RDMA netns mode the driver may have moved it before raild read it: see raild topo", dev, dev.Claim, pci, attrs.RDMADevice)
	}
	return out, nil
}

// hasNetdev tells whether the port carries the netdev.
func hasNetdev(n topology.NIC, netdev string) bool {
	if n.Netdev == netdev {
		return true
	}
	for _, p := range n.Ports {
		if slices.Contains(p.Netdevs, netdev) {
			return true
		}
	}
	return false
}
