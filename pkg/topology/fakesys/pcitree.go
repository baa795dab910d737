package fakesys

import (
	"fmt"
	"hash/fnv"
	"strconv"
)

// builder writes one machine and records its Spec.
type builder struct {
	f        *files
	name     string
	opt      Options
	spec     *Spec
	nextBus  int
	domain   int            // the PCI domain of the root being written
	nodeCPUs map[int]string // NUMA node → its CPU list, from Host.Nodes
	allCPUs  string         // every node's CPUs, for a function of numa_node -1
	nextSlot int            // PCIe slot numbers for Ethernet names
	verbs    int            // next uverbsN
	mad      int            // next umadN / issmN
	virtio   int            // next virtioN
	drivers  map[string]bool
}

func newBuilder(root, name string, opt Options) *builder {
	return &builder{
		f:        &files{root: root},
		name:     name,
		opt:      opt,
		spec:     &Spec{Machine: name, Root: root},
		nextSlot: 1,
		drivers:  map[string]bool{},
	}
}

// pciID is what a PCI function's vendor, device and class files hold.
type pciID struct{ vendor, device, class, driver string }

var (
	rootPortID = pciID{"0x8086", "0x352a", "0x060400", "pcieport"}
	switchID   = pciID{"0x1000", "0xc030", "0x060400", "pcieport"}
	gpuID      = pciID{"0x10de", "0x2330", "0x030200", "nvidia"}
)

func (b *builder) host(h Host) error {
	b.nodes(h.Nodes)
	for i, r := range h.Roots {
		if int(r.Domain) != b.domain {
			if int(r.Domain) < b.domain {
				return fmt.Errorf("root %d: domain %04x after %04x (roots go in ascending domain order)", i, r.Domain, b.domain)
			}
			b.domain, b.nextBus = int(r.Domain), 0
		}
		if int(r.Bus) < b.nextBus {
			return fmt.Errorf("root %d: bus %#02x overlaps buses already used (roots go in ascending, disjoint bus ranges)", i, r.Bus)
		}
		if err := b.root(i, r); err != nil {
			return err
		}
	}
	for i, s := range h.SoftRoCE {
		if s.RDMA == "" || s.Netdev == "" {
			return fmt.Errorf("soft-roce %d: RDMA and Netdev must be set", i)
		}
		b.softRoCE(s)
	}
	b.classFiles(h.RdmaCM)
	return nil
}

func (b *builder) root(i int, r Root) error {
	dir := fmt.Sprintf("/sys/devices/pci%04x:%02x", r.Domain, r.Bus)
	if r.VMBus {
		dir = fmt.Sprintf("/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/%s/pci%04x:%02x",
			b.vmbusGUID(r), r.Domain, r.Bus)
	}
	b.f.file(dir+"/uevent", "")
	b.nextBus = int(r.Bus) + 1
	if r.VMBus {
		if len(r.Ports) != 1 || r.Ports[0].Switch != nil {
			return fmt.Errorf("root %d: a VMBus root holds exactly one device and no switch", i)
		}
		if err := r.Ports[0].validate(fmt.Sprintf("root %d", i)); err != nil {
			return err
		}
		return b.place(fmt.Sprintf("root %d", i), dir, int(r.Bus), r.Ports[0], r.NUMA)
	}
	for p, s := range r.Ports {
		where := fmt.Sprintf("root %d port %d", i, p)
		port := b.function(dir, b.addr(int(r.Bus), p+1, 0), r.NUMA, rootPortID)
		if err := b.slot(where, port, s, r.NUMA); err != nil {
			return err
		}
	}
	return nil
}

// takeBus hands out the next secondary bus number.
func (b *builder) takeBus(where string) (int, error) {
	if b.nextBus > 0xff {
		return 0, fmt.Errorf("%s: ran out of bus numbers (more than 255 below one root)", where)
	}
	b.nextBus++
	return b.nextBus - 1, nil
}

// slot writes what sits behind a bridge whose directory is parent.
func (b *builder) slot(where, parent string, s Slot, numa int) error {
	if err := s.validate(where); err != nil {
		return err
	}
	bus, err := b.takeBus(where)
	if err != nil {
		return err
	}
	return b.place(where, parent, bus, s, numa)
}

// place writes a slot's content on bus below parent.
func (b *builder) place(where, parent string, bus int, s Slot, numa int) error {
	switch {
	case s.Switch != nil:
		return b.pcieSwitch(where, parent, bus, s.Switch, numa)
	case s.GPU != nil:
		b.gpu(parent, b.addr(bus, 0, 0), numa, *s.GPU)
	case s.Card != nil:
		b.card(parent, bus, numa, *s.Card)
	case s.Other != nil:
		o := s.Other
		b.function(parent, b.addr(bus, 0, 0), numa, pciID{o.Vendor, o.Device, o.Class, o.Driver})
	}
	return nil
}

// pcieSwitch writes an upstream port and one downstream port per child.
func (b *builder) pcieSwitch(where, parent string, bus int, children []Slot, numa int) error {
	up := b.function(parent, b.addr(bus, 0, 0), numa, switchID)
	down, err := b.takeBus(where)
	if err != nil {
		return err
	}
	for i, child := range children {
		port := b.function(up, b.addr(down, i, 0), numa, switchID)
		if err := b.slot(fmt.Sprintf("%s switch port %d", where, i), port, child, numa); err != nil {
			return err
		}
	}
	return nil
}

// addr is a PCI address in the domain of the root being written.
func (b *builder) addr(bus, dev, fn int) string {
	return fmt.Sprintf("%04x:%02x:%02x.%d", b.domain, bus, dev, fn)
}

// function writes one PCI function's directory below parent with its
// attributes, the bus links and the driver binding; it returns its path.
func (b *builder) function(parent, bdf string, numa int, id pciID) string {
	dir := parent + "/" + bdf
	b.f.file(dir+"/vendor", id.vendor)
	b.f.file(dir+"/device", id.device)
	b.f.file(dir+"/class", id.class)
	b.f.file(dir+"/numa_node", strconv.Itoa(numa))
	if cpus, ok := b.nodeCPUs[numa]; ok {
		b.f.file(dir+"/local_cpulist", cpus)
	} else if numa < 0 && b.allCPUs != "" {
		b.f.file(dir+"/local_cpulist", b.allCPUs) // no node: the kernel's mask is every online CPU
	}
	b.f.file(dir+"/uevent", "PCI_SLOT_NAME="+bdf)
	b.f.link(dir+"/subsystem", "/sys/bus/pci")
	b.f.link("/sys/bus/pci/devices/"+bdf, dir)
	if id.driver != "" {
		drv := "/sys/bus/pci/drivers/" + id.driver
		b.f.link(dir+"/driver", drv)
		b.f.link(drv+"/"+bdf, dir)
		b.drivers[id.driver] = true
	}
	return dir
}

// gpu writes an NVIDIA GPU and its /proc/driver/nvidia/gpus entry.
func (b *builder) gpu(parent, bdf string, numa int, g GPU) {
	dir := b.function(parent, bdf, numa, gpuID)
	if g.MemoryNode != nil {
		b.f.file(dir+"/numa_node", strconv.Itoa(*g.MemoryNode))
	}
	minor := len(b.spec.GPUs)
	uuid := b.uuid(bdf)
	if minor < len(b.opt.GPUUUIDs) && b.opt.GPUUUIDs[minor] != "" {
		uuid = b.opt.GPUUUIDs[minor]
	}
	model := g.Model
	if model == "" {
		model = "NVIDIA H100 80GB HBM3"
	}
	b.f.file("/proc/driver/nvidia/gpus/"+bdf+"/information", fmt.Sprintf(
		"Model: \t\t %s\nIRQ:   \t\t %d\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.99.00.01\n"+
			"Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\n"+
			"Bus Location: \t %s\nDevice Minor: \t %d\nGPU Firmware: \t 550.90.07\nGPU Excluded:\t No",
		model, 200+minor, uuid, bdf, minor))
	if g.MemoryNode != nil {
		numa = *g.MemoryNode
	}
	b.spec.GPUs = append(b.spec.GPUs, GPUSpec{
		Index: minor, PCI: bdf, UUID: uuid, Model: model, Minor: minor, NUMA: numa,
	})
}

// uuid derives a stable GPU UUID from the machine name and address.
func (b *builder) uuid(bdf string) string {
	h1, h2 := fnv.New64a(), fnv.New64()
	h1.Write([]byte(b.name + "/" + bdf))
	h2.Write([]byte(bdf + "/" + b.name))
	x, y := h1.Sum64(), h2.Sum64()
	return fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x",
		x>>32, (x>>16)&0xffff, x&0xffff, y>>48, y&0xffffffffffff)
}

// classFiles writes the class and driver attributes real sysfs has beside
// the device entries (abi_version, bind, unbind), which readers must skip.
func (b *builder) classFiles(rdmaCM bool) {
	b.f.file("/sys/class/infiniband_verbs/abi_version", "6")
	b.f.file("/sys/class/infiniband_mad/abi_version", "5")
	b.f.dir("/sys/class/infiniband")
	b.f.dir("/sys/class/net")
	for drv := range b.drivers {
		dir := "/sys/bus/pci/drivers/" + drv
		for _, attr := range []string{"bind", "unbind", "new_id", "remove_id"} {
			b.f.file(dir+"/"+attr, "")
		}
		b.f.file(dir+"/uevent", "")
	}
	b.rdmaCM(rdmaCM)
}
