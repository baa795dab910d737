package topology

import (
	"fmt"
	"strings"
)

// A node without RDMA hardware (softRoCE mode: each pod's RDMA device is
// an rxe rail makes in the pod) places its Ethernet NICs themselves: a
// netdev-only NIC is the netdev of a physical PCI function that has no
// RDMA device, named as its netdev (eth1, ens4). It has no RDMA device,
// port, uverbs or GID table on the host; its State is the netdev's
// (operstate and carrier: PortActive when it carries traffic), its link
// layer Ethernet, its place in the PCIe tree its function's. No RDMA
// device in the host's netns sits on it, so the address of a pod's child
// interface (macvlan, ipvlan) lands in no host GID table and the pod's
// own rxe answers rdma_cm for it.

// netdevDown is a netdev-only NIC's State when it cannot carry traffic.
const netdevDown = "DOWN"

const netClassDir = "/sys/class/net"

// discoverNetdevNICs reads the netdev-only NICs of /sys/class/net, in
// natural name order: every netdev whose function qualifies
// (netdevNIC) and that no RDMA device of nics sits on (a software one on
// the netdev itself, as an rxe made in the host's netns).
func (d *discovery) discoverNetdevNICs(nics []NIC) []NIC {
	names, err := d.fs.names(netClassDir)
	if err != nil {
		return nil
	}
	sortNatural(names)
	onNetdev := map[string]bool{}
	for _, n := range nics {
		if n.Netdev != "" {
			onNetdev[n.Netdev] = true
		}
	}
	var out []NIC
	for _, name := range names {
		if onNetdev[name] {
			continue
		}
		if n, ok := d.netdevNIC(name); ok {
			out = append(out, n)
		}
	}
	return out
}

// netdevNIC reads one netdev as a netdev-only NIC; false when it is none:
// gone or not valid, no `device` link to a PCI function (veth, bridge,
// macvlan, a VM's netdev on no PCI bus), a VF (its PF's SR-IOV is vf
// mode's), an mlx5 sub-function, a function with an RDMA device of its
// own (a ConnectX: placed by that device), or not Ethernet (type 1).
func (d *discovery) netdevNIC(netdev string) (NIC, bool) {
	if !validName(netdev) {
		return NIC{}, false
	}
	dir := netClassDir + "/" + netdev
	dev, err := d.fs.real(dir + "/device")
	if err != nil {
		return NIC{}, false
	}
	if kind, err := d.fs.read(dir + "/type"); err != nil || kind != "1" {
		return NIC{}, false
	}
	root, path, addr, ok := pciLocation(dev)
	if !ok {
		return NIC{}, false
	}
	// The PCI function: dev itself (e1000, igb) or its parent (virtio-net
	// registers the netdev below a virtio<N> device of the function).
	fn := dev[:strings.LastIndex(dev, "/"+addr)+len(addr)+1]
	if base := dev[len(fn):]; strings.HasPrefix(base, "/mlx5_core.") {
		return NIC{}, false // an mlx5 sub-function (auxiliary bus)
	}
	if d.fs.isLink(fn+"/physfn") || d.fs.isLink(dev+"/physfn") {
		return NIC{}, false
	}
	if rdma, err := d.fs.names(fn + "/infiniband"); err == nil && len(rdma) > 0 {
		return NIC{}, false
	}
	n := NIC{Name: netdev, PCI: addr, Netdev: netdev, LinkLayer: Ethernet, NetdevOnly: true, Root: root, Path: path}
	n.NUMA = d.numa(netdev, fn)
	n.CPUNode = d.cpuNode(d.cpus, fn, n.NUMA)
	n.State = d.netdevState(netdev)
	n.Links = d.netdevLinks(netdev)
	return n, true
}

// netdevState is a netdev's state as a netdev-only NIC's State:
// PortActive when its operstate is up (the kernel's "up" already means
// carrier; "unknown", which drivers without carrier reporting show, counts
// when the carrier file says 1), netdevDown otherwise.
func (d *discovery) netdevState(netdev string) string {
	dir := netClassDir + "/" + netdev
	oper, err := d.fs.read(dir + "/operstate")
	if err != nil {
		return netdevDown
	}
	switch oper {
	case "up":
		return PortActive
	case "unknown":
		if carrier, err := d.fs.read(dir + "/carrier"); err == nil && carrier == "1" {
			return PortActive
		}
	}
	return netdevDown
}

// netdevNICsOf reads one netdev again as a netdev-only NIC: the NIC, or
// none when it is gone or no longer one (it has an RDMA device now).
func (s *Sysfs) netdevNICsOf(netdev string) []NIC {
	d := &discovery{fs: s.fs, cpus: s.cpus}
	if n, ok := d.netdevNIC(netdev); ok && !d.softRDMAOn(netdev) {
		return []NIC{n}
	}
	return nil
}

// softRDMAOn says whether a software RDMA device (rxe, siw) in the host's
// netns sits on netdev (its parent file names it).
func (d *discovery) softRDMAOn(netdev string) bool {
	names, err := d.fs.names(ibClassDir)
	if err != nil {
		return false
	}
	for _, name := range names {
		if IsPodSoftRoCE(name) {
			continue
		}
		if parent, err := d.fs.read(ibClassDir + "/" + name + "/parent"); err == nil && parent == netdev {
			return true
		}
	}
	return false
}

// SoftRDMANICs are the software RDMA devices (rxe, siw) of the host's
// netns among the NICs: an rxe made at boot to stand in for a port
// (`rdma link add rxe0 type rxe netdev eth1`). On a softRoCE node each
// takes the rdma_cm of the pods on its netdev, since the kernel mirrors
// every macvlan or ipvlan child's address into the GID table of the RDMA
// devices on its lower netdev, and the container can open only its own
// rxe. The pods' own rxe (railrxe…) are never NICs.
func (m *Machine) SoftRDMANICs() []NIC {
	var out []NIC
	for _, n := range m.NICs {
		if n.Virtual && !n.NetdevOnly {
			out = append(out, n)
		}
	}
	return out
}

// StandInProblem says, of a software RDMA device SoftRDMANICs lists,
// why it breaks a softRoCE node's pods and how to remove it.
func (n NIC) StandInProblem() string {
	return fmt.Sprintf("RDMA device %[1]s sits on netdev %[2]s in the host's netns: the kernel mirrors the address of every pod "+
		"interface on %[2]s (macvlan, ipvlan) into %[1]s's GID table, so %[1]s takes the pods' rdma_cm (in the container, which can open only "+
		"its own rxe, rdma_bind_addr fails with ENODEV); a softRoCE node places its NICs by their netdevs and needs no RDMA device on them: "+
		"delete it (rdma link delete %[1]s) and whatever creates it at boot", n.RDMADevice(), n.Netdev)
}
