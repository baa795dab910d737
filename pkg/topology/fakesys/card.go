package fakesys

import (
	"fmt"
)

// nicPlan is one RDMA device to write.
type nicPlan struct {
	name      string
	devDir    string // PCI function directory; "" for software devices
	pci       string
	linkLayer string
	state     string
	phys      string // phys_state name, "" for what state implies
	rate      string
	netdev    string // "" when it has none
	parent    string // software devices: the netdev they run on
	hcaType   string
	numa      int
	more      []portPlan // ports 2, 3, … of the device
	vf, bond  bool
	slaves    []string
}

// card writes a NIC card's functions, their netdevs and RDMA devices.
func (b *builder) card(parent string, bus, numa int, c Card) {
	slot := c.Slot
	if slot == 0 {
		slot = b.nextSlot
	}
	b.nextSlot = max(b.nextSlot, slot+1)
	model := modelOf(c.Model)
	multi := len(c.Funcs) > 1
	nextFn := len(c.Funcs)
	var slaves []string
	var slaveDirs []string
	var pf0 nicPlan
	for fn, f := range c.Funcs {
		bdf := b.addr(bus, 0, fn)
		dir := b.function(parent, bdf, numa, pciID{model.vendor, model.device, nicClass(f.LinkLayer), model.driver})
		p := b.plan(f, dir, bdf, numa, model.hcaType)
		p.netdev = b.netdevName(f, bus, fn, slot, multi, c.Bond != "")
		if p.netdev != "" {
			netdevParent := dir
			if model.virtio {
				netdevParent = b.virtioDevice(dir)
			}
			slaveDirs = append(slaveDirs, b.netdev(netdevParent, p.netdev, f.LinkLayer, 0, p.state, p.name))
			slaves = append(slaves, p.netdev)
		}
		p.more = b.morePorts(f, p)
		if fn == 0 {
			pf0 = p
		}
		if c.Bond == "" && model.rdma && !f.NoRDMA {
			b.rdmaDevice(p)
		}
		for k, sf := range f.SFs {
			b.subFunction(dir, bdf, numa, sf, k, fmt.Sprintf("ens%df%dnpf%ds%d", slot, fn, fn, k))
		}
		if len(f.VFs) == 0 && f.TotalVFs == 0 {
			continue
		}
		pf := pfPlan{dir: dir, pci: bdf, netdev: p.netdev, model: model, numa: numa, parent: parent}
		if model.rdma && !f.NoRDMA {
			pf.rdma = f.RDMA
		}
		total := max(f.TotalVFs, len(f.VFs))
		offset, stride := nextFn-fn, 1 // mlx5 with ARI: VFs packed after the PFs
		if model.vfOffset > 0 {
			offset, stride = model.vfOffset, model.vfStride
		} else {
			nextFn += total
		}
		b.sriovFiles(pf, offset, stride, total, len(f.VFs))
		for k, vf := range f.VFs {
			devfn := fn + offset + k*stride
			dev, vfn := devfn/8, devfn%8
			name := vfNetdevName(b.opt, vf, fmt.Sprintf("ibp%ds%df%d", bus, dev, vfn),
				fmt.Sprintf("ens%df%dv%d", slot, fn, k))
			b.virtualFunction(pf, b.addr(bus, dev, vfn), vf, k, name)
		}
	}
	switch {
	case c.Bond != "":
		b.bondDevice(c, pf0, slaves, slaveDirs)
	case c.Master != "":
		b.bondMaster(c.Master, slaves, slaveDirs)
	}
}

type cardModel struct {
	vendor, device, vfDevice, hcaType, vfHcaType, driver, vfDriver string
	rdma                                                           bool // its functions register RDMA devices
	// vfOffset and vfStride place VF k at the PF's routing ID + offset +
	// k*stride (sriov_offset, sriov_stride); 0: packed after the card's
	// functions, one apart, as mlx5 cards with ARI show them.
	vfOffset, vfStride int
	// virtio: the function is a virtio PCI device (driver virtio-pci)
	// whose netdev virtio_net registers below a virtio<N> device of it.
	virtio bool
}

// IntelIGB is the model name of an Intel 82576 card (igb PF, igbvf VFs,
// no RDMA devices), the NIC of the SR-IOV VM rig.
const IntelIGB = "82576"

// VirtioNet is the model name of a VM's virtio-net PCI NIC (QEMU's
// virtio-net-pci, modern: 1af4:1041), without an RDMA device: the rail
// NICs of a softRoCE VM.
const VirtioNet = "virtio-net"

// E1000E is the model name of QEMU's emulated Intel 82574L NIC (e1000e),
// without an RDMA device: its netdev sits on the PCI function itself.
const E1000E = "e1000e"

// modelOf returns a card's PCI IDs, HCA types and drivers; unknown models
// are written as ConnectX-7.
func modelOf(name string) cardModel {
	switch name {
	case "ConnectX-6 Dx":
		return cardModel{"0x15b3", "0x101d", "0x101e", "MT4125", "MT4126", "mlx5_core", "mlx5_core", true, 0, 0, false}
	case "ConnectX-5":
		return cardModel{"0x15b3", "0x1017", "0x1018", "MT4119", "MT4120", "mlx5_core", "mlx5_core", true, 0, 0, false}
	case "ConnectX-6":
		return cardModel{"0x15b3", "0x101b", "0x101c", "MT4123", "MT4124", "mlx5_core", "mlx5_core", true, 0, 0, false}
	case "ConnectX-3 Pro":
		return cardModel{"0x15b3", "0x1007", "0x1004", "MT4103", "MT4100", "mlx4_core", "mlx4_core", true, 0, 0, false}
	case VirtioNet:
		return cardModel{vendor: "0x1af4", device: "0x1041", driver: "virtio-pci", virtio: true}
	case E1000E:
		return cardModel{vendor: "0x8086", device: "0x10d3", driver: "e1000e"}
	case IntelIGB:
		return cardModel{"0x8086", "0x10c9", "0x10ca", "", "", "igb", "igbvf", false, 128, 2, false} // 01:00.0's VFs: 01:10.0, 01:10.2, …
	}
	return cardModel{"0x15b3", "0x1021", "0x101e", "MT4129", "MT4126", "mlx5_core", "mlx5_core", true, 0, 0, false}
}

func nicClass(linkLayer string) string {
	if linkLayer == "InfiniBand" {
		return "0x020700"
	}
	return "0x020000"
}

// virtioDevice writes the virtio<N> device a virtio PCI function carries
// (on the virtio bus, bound to virtio_net) and returns its directory, where
// the netdev goes: /sys/devices/pci0000:00/…/0000:01:00.0/virtio1/net/eth1.
func (b *builder) virtioDevice(fnDir string) string {
	name := fmt.Sprintf("virtio%d", b.virtio)
	b.virtio++
	dir := fnDir + "/" + name
	b.f.file(dir+"/vendor", "0x1af4")
	b.f.file(dir+"/device", "0x0001") // VIRTIO_ID_NET
	b.f.file(dir+"/status", "0x0000000f")
	b.f.file(dir+"/uevent", "DRIVER=virtio_net\nMODALIAS=virtio:d00000001v00001AF4")
	b.f.link(dir+"/subsystem", "/sys/bus/virtio")
	b.f.link("/sys/bus/virtio/devices/"+name, dir)
	drv := "/sys/bus/virtio/drivers/virtio_net"
	b.f.link(dir+"/driver", drv)
	b.f.link(drv+"/"+name, dir)
	return dir
}

// plan fills what a function's RDMA device gets from its description.
func (b *builder) plan(f Func, dir, bdf string, numa int, hcaType string) nicPlan {
	p := nicPlan{
		name: f.RDMA, devDir: dir, pci: bdf, linkLayer: f.LinkLayer,
		state: f.State, phys: f.PhysState, rate: f.Rate, numa: numa, hcaType: hcaType,
	}
	p.state, p.rate = defaultState(p.state), defaultRate(p.rate, f.LinkLayer)
	return p
}

// netdevName is the netdev a function gets: the Options override, the
// description's name, or a systemd-style name (ibp25s0, ens3f0np0).
func (b *builder) netdevName(f Func, bus, fn, slot int, multi, bonded bool) string {
	if nd, ok := b.opt.Netdevs[f.RDMA]; ok && !bonded {
		return nd
	}
	switch {
	case f.NoNetdev:
		return ""
	case f.Netdev != "":
		return f.Netdev
	case f.LinkLayer == "InfiniBand" && multi:
		return fmt.Sprintf("ib%sp%ds0f%d", b.domainPart(), bus, fn)
	case f.LinkLayer == "InfiniBand":
		return fmt.Sprintf("ib%sp%ds0", b.domainPart(), bus)
	case multi:
		return fmt.Sprintf("ens%df%dnp%d", slot, fn, fn)
	}
	return fmt.Sprintf("ens%dnp0", slot)
}

// domainPart is systemd's "P<domain>" in a netdev name, for a PCI domain
// other than 0 (ibP2p1s0).
func (b *builder) domainPart() string {
	if b.domain == 0 {
		return ""
	}
	return fmt.Sprintf("P%d", b.domain)
}

// vfNetdevName is a VF's netdev: the Options override, the description's
// name, or the systemd-style name for its link layer.
func vfNetdevName(opt Options, vf Func, ibName, ethName string) string {
	switch nd, ok := opt.Netdevs[vf.RDMA]; {
	case ok:
		return nd
	case vf.NoNetdev:
		return ""
	case vf.Netdev != "":
		return vf.Netdev
	case vf.LinkLayer == "InfiniBand":
		return ibName
	}
	return ethName
}

// bondDevice writes the bond master over the functions' netdevs and the
// one RoCE LAG RDMA device that replaces the per-function ones.
func (b *builder) bondDevice(c Card, pf0 nicPlan, slaves, slaveDirs []string) {
	master := "bond0"
	if nd, ok := b.opt.Netdevs[c.Bond]; ok {
		master = nd
	}
	b.bondMaster(master, slaves, slaveDirs)
	p := pf0
	p.name, p.netdev, p.bond, p.slaves = c.Bond, master, true, slaves
	p.linkLayer = "Ethernet"
	b.rdmaDevice(p)
}

// sfBase is the first auxiliary device number mlx5 gives sub-functions.
const sfBase = 2

// subFunction writes an mlx5 sub-function as the auxiliary bus shows it: a
// device below its parent PCI function (no numa_node of its own, as on a
// real node), its netdev and its RDMA device.
func (b *builder) subFunction(pfDir, pfAddr string, numa int, sf Func, k int, netdev string) {
	name := "mlx5_core.sf." + fmt.Sprint(sfBase+k)
	dir := pfDir + "/" + name
	b.f.file(dir+"/sfnum", fmt.Sprint(88+k))
	b.f.file(dir+"/uevent", "MODALIAS=auxiliary:mlx5_core.sf")
	b.f.link(dir+"/subsystem", "/sys/bus/auxiliary")
	b.f.link("/sys/bus/auxiliary/devices/"+name, dir)
	p := b.plan(sf, dir, pfAddr, numa, modelOf("ConnectX-7").hcaType)
	p.netdev = netdev
	if nd, ok := b.opt.Netdevs[sf.RDMA]; ok {
		p.netdev = nd
	}
	if sf.NoNetdev {
		p.netdev = ""
	}
	if p.netdev != "" {
		b.netdev(dir, p.netdev, sf.LinkLayer, 0, p.state, p.name)
	}
	b.rdmaDevice(p)
}
