package draslices

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/railcni/rail/daemon/podinfo"
)

// pciBusIDAttribute is Kubernetes' standard attribute for a device's PCI
// address (resource.kubernetes.io/pciBusID).
const pciBusIDAttribute resourcev1.QualifiedName = "resource.kubernetes.io/pciBusID"

// The attributes a NIC driver publishes in its own domain, as DRANet names
// them (dra.net/<name>).
const (
	attrPCIAddress = "pciAddress"
	attrRDMA       = "rdma"
	attrRDMADevice = "rdmaDevice"
	attrIfName     = "ifName"
	attrIPv4       = "ipv4"
	attrIPv6       = "ipv6"
)

// NICAttributes reads a NIC driver's device from the node's slices: its
// PCI address (the standard attribute first, then the driver's
// pciAddress), RDMA device, netdev and addresses. It waits as GPUID does.
// A device whose driver says it has no RDMA function gives an error
// wrapping podinfo.ErrDRANotRDMA.
func (s *Slices) NICAttributes(ctx context.Context, dev podinfo.DRADevice) (podinfo.NICAttributes, error) {
	if !s.nicDrivers[dev.Driver] {
		return podinfo.NICAttributes{}, fmt.Errorf("DRA device %s: driver %s is not a NIC driver raild reads (draNICDrivers: %v)",
			dev, dev.Driver, names(s.nicDrivers))
	}
	d, driver, err := s.await(ctx, dev)
	if err != nil {
		return podinfo.NICAttributes{}, err
	}
	return nicAttributes(driver, d, dev)
}

func nicAttributes(driver string, d resourcev1.Device, dev podinfo.DRADevice) (podinfo.NICAttributes, error) {
	if a, ok := d.Attributes[resourcev1.QualifiedName(driver+"/"+attrRDMA)]; ok && a.BoolValue != nil && !*a.BoolValue {
		return podinfo.NICAttributes{}, fmt.Errorf("DRA device %s (claim %s): %w (%s/%s is false)", dev, dev.Claim, podinfo.ErrDRANotRDMA, driver, attrRDMA)
	}
	out := podinfo.NICAttributes{
		RDMADevice: attribute(driver, d, attrRDMADevice),
		IfName:     attribute(driver, d, attrIfName),
		PCI:        stringAttribute(d, pciBusIDAttribute),
	}
	if out.PCI == "" {
		out.PCI = attribute(driver, d, attrPCIAddress)
	}
	for _, name := range []string{attrIPv4, attrIPv6} {
		addrs, err := prefixList(attribute(driver, d, name))
		if err != nil {
			return podinfo.NICAttributes{}, fmt.Errorf("DRA device %s (claim %s): attribute %s/%s: %w", dev, dev.Claim, driver, name, err)
		}
		out.Addrs = append(out.Addrs, addrs...)
	}
	return out, nil
}

// stringAttribute is a fully qualified string attribute, "" when absent.
func stringAttribute(d resourcev1.Device, name resourcev1.QualifiedName) string {
	if a, ok := d.Attributes[name]; ok && a.StringValue != nil {
		return *a.StringValue
	}
	return ""
}

// prefixList parses a comma-separated list of addresses with or without a
// prefix length ("10.0.0.5/24,10.0.0.6").
func prefixList(v string) ([]netip.Addr, error) {
	var out []netip.Addr
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Addr())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or a prefix", part)
		}
		out = append(out, a)
	}
	return out, nil
}

// NICsOf maps the PCI address of every device another DRA driver (not
// own) publishes for this node to that driver: the standard pciBusID, else
// the driver's own pciBusID or pciAddress. Rail's DRA driver leaves those NICs to
// their driver. Before the informer has listed it is empty.
func (s *Slices) NICsOf(own string) map[string]string {
	out := map[string]string{}
	for _, obj := range s.informer.GetStore().List() {
		slice, ok := obj.(*resourcev1.ResourceSlice)
		if !ok || slice.Spec.Driver == own || slice.Spec.NodeName == nil || *slice.Spec.NodeName != s.node {
			continue
		}
		for _, d := range slice.Spec.Devices {
			pci := stringAttribute(d, pciBusIDAttribute)
			for _, name := range []string{"pciBusID", attrPCIAddress} {
				if pci == "" {
					pci = attribute(slice.Spec.Driver, d, name)
				}
			}
			if pci != "" {
				out[pci] = slice.Spec.Driver
			}
		}
	}
	return out
}

// Changed is closed at the next slice event.
func (s *Slices) Changed() <-chan struct{} { return s.changes() }
