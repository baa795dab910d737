package fakesys

import (
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
)

// Char device numbers as the kernel hands them out: ib_umad uses 231:0-63
// for umad and 231:64-127 for issm, ib_uverbs 231:192+, rdma_cm is a misc
// device with a dynamic minor.
const (
	ibMajor     = 231
	issmBase    = 64
	uverbsBase  = 192
	miscMajor   = 10
	rdmaCMMinor = 58
)

// physStateNumbers are the numbers sysfs prints before a phys_state.
var physStateNumbers = map[string]int{"Sleep": 1, "Polling": 2, "Disabled": 3, "PortConfigurationTraining": 4,
	"LinkUp": 5, "LinkErrorRecovery": 6, "Phy Test": 7}

// portFiles returns the state and phys_state files' text for a port: the
// phys_state given, else the one the state implies.
func portFiles(state, phys string) (string, string) {
	s, implied := portState(state)
	if num, ok := physStateNumbers[phys]; ok {
		return s, strconv.Itoa(num) + ": " + phys
	}
	return s, implied
}

// portState returns the state and phys_state files' text for a state.
func portState(state string) (string, string) {
	switch state {
	case "ACTIVE":
		return "4: ACTIVE", "5: LinkUp"
	case "ARMED":
		return "3: ARMED", "5: LinkUp"
	case "INIT":
		return "2: INIT", "5: LinkUp"
	case "DOWN":
		return "1: DOWN", "3: Disabled"
	}
	return "1: " + state, "2: Polling"
}

// rdmaDevice writes /sys/…/infiniband/<name> with its ports, its class
// link, and its uverbs and per-port umad and (InfiniBand only) issm char
// devices.
func (b *builder) rdmaDevice(p nicPlan) {
	base := p.devDir
	if base == "" {
		base = "/sys/devices/virtual"
	}
	ib := base + "/infiniband/" + p.name
	guid := b.guid(p.name)
	b.f.file(ib+"/node_guid", guid)
	b.f.file(ib+"/sys_image_guid", guid)
	b.f.file(ib+"/node_type", "1: CA")
	b.f.file(ib+"/node_desc", b.name+" "+p.name)
	if p.hcaType != "" {
		b.f.file(ib+"/hca_type", p.hcaType)
	}
	b.f.file(ib+"/fw_ver", "28.39.1002")
	if p.devDir != "" {
		b.f.link(ib+"/device", p.devDir)
	}
	if p.parent != "" {
		b.f.file(ib+"/parent", p.parent)
	}
	b.f.link("/sys/class/infiniband/"+p.name, ib)

	spec := NICSpec{
		Name: p.name, PCI: p.pci, Netdev: p.netdev, Slaves: p.slaves, LinkLayer: p.linkLayer,
		State: p.state, NUMA: p.numa, Virtual: p.devDir == "", VF: p.vf, Bond: p.bond,
	}
	b.devicePorts(ib, base, p, &spec)
	b.spec.NICs = append(b.spec.NICs, spec)
}

// port writes ports/<n>: state, phys_state, link_layer, rate and, on RoCE
// ports, the netdev of GID 0 (InfiniBand ports cannot read it: left out).
func (b *builder) port(dir string, p portPlan) {
	state, phys := portFiles(p.state, p.phys)
	b.f.file(dir+"/state", state)
	b.f.file(dir+"/phys_state", phys)
	b.f.file(dir+"/link_layer", p.linkLayer)
	b.f.file(dir+"/rate", p.rate)
	b.f.file(dir+"/cap_mask", "0xa751e848")
	if p.linkLayer == "InfiniBand" {
		b.f.file(dir+"/lid", "0x"+strconv.FormatInt(int64(b.verbs+p.num), 16))
		b.f.file(dir+"/sm_lid", "0x1")
		return
	}
	b.f.file(dir+"/lid", "0x0")
	if p.netdev != "" {
		b.f.file(dir+"/gid_attrs/ndevs/0", p.netdev)
		b.f.file(dir+"/gid_attrs/types/0", "IB/RoCE v1")
	}
}

// classDev writes one char device of an RDMA device (ibdev, dev, uevent)
// and its class link, honouring Options.DevNumbers.
func (b *builder) classDev(base, class, name string, p nicPlan, major, minor uint32) DevSpec {
	if nums, ok := b.opt.DevNumbers[name]; ok {
		major, minor = nums[0], nums[1]
	}
	dir := base + "/" + class + "/" + name
	b.f.file(dir+"/ibdev", p.name)
	b.devFiles(dir, name, major, minor)
	if p.devDir != "" {
		b.f.link(dir+"/device", p.devDir)
	}
	b.f.link("/sys/class/"+class+"/"+name, dir)
	return DevSpec{Name: name, Major: major, Minor: minor}
}

// devFiles writes `dev` ("231:192") and `uevent` as the kernel does.
func (b *builder) devFiles(dir, name string, major, minor uint32) {
	b.f.file(dir+"/dev", fmt.Sprintf("%d:%d", major, minor))
	b.f.file(dir+"/uevent", fmt.Sprintf("MAJOR=%d\nMINOR=%d\nDEVNAME=infiniband/%s", major, minor, name))
}

// rdmaCM writes /sys/class/misc/rdma_cm when the machine has RDMA devices
// or always is set (Host.RdmaCM).
func (b *builder) rdmaCM(always bool) {
	if len(b.spec.NICs) == 0 && !always {
		return
	}
	major, minor := uint32(miscMajor), uint32(rdmaCMMinor)
	if nums, ok := b.opt.DevNumbers["rdma_cm"]; ok {
		major, minor = nums[0], nums[1]
	}
	dir := "/sys/devices/virtual/misc/rdma_cm"
	b.devFiles(dir, "rdma_cm", major, minor)
	b.f.link("/sys/class/misc/rdma_cm", dir)
	b.spec.RdmaCM = DevSpec{Name: "rdma_cm", Major: major, Minor: minor}
}

// softRoCE writes an rxe device on its netdev: a new virtual one, or one
// a card already has (then the kernel places rxe at that PCI function).
func (b *builder) softRoCE(s SoftRoCE) {
	netdev := s.Netdev
	if nd, ok := b.opt.Netdevs[s.RDMA]; ok {
		netdev = nd
	}
	numa := -1
	if _, err := os.Lstat(b.f.host("/sys/class/net/" + netdev)); err != nil {
		b.netdev("", netdev, "Ethernet", 0, "ACTIVE", s.RDMA)
	} else if fn, err := b.f.real("/sys/class/net/" + netdev + "/device"); err == nil {
		if n, err := b.f.readInt(fn + "/numa_node"); err == nil {
			numa = n // placed at its netdev's PCI function, as discovery does
		}
	}
	b.rdmaDevice(nicPlan{
		name: s.RDMA, linkLayer: "Ethernet", state: "ACTIVE", rate: "10 Gb/sec (1X QDR)",
		netdev: netdev, parent: netdev, hcaType: "", numa: numa,
	})
}

// guid derives a stable node GUID from the machine and device names.
func (b *builder) guid(name string) string {
	h := fnv.New64a()
	h.Write([]byte(b.name + "/" + name))
	x := h.Sum64()
	return fmt.Sprintf("a088:c203:%04x:%04x", (x>>16)&0xffff, x&0xffff)
}
