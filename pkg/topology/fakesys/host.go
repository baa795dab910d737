package fakesys

import (
	"fmt"
)

// Host describes a machine's PCIe tree and RDMA devices. Bus numbers are
// assigned depth first from each root's bus, the way firmware enumerates.
type Host struct {
	Roots    []Root     // in ascending (domain, bus) order
	SoftRoCE []SoftRoCE // rxe devices on virtual netdevs
	// Nodes, when set, writes /sys/devices/system/node/nodeN/cpulist for
	// each NUMA node N (its CPUs, "" for a node of memory alone) and every
	// PCI function's local_cpulist from its NUMA node.
	Nodes []NUMANode
	// RdmaCM writes /sys/class/misc/rdma_cm even without RDMA devices
	// (rdma_ucm loaded on a softRoCE node, whose pods' rxe use it).
	RdmaCM bool
}

// NUMANode is one NUMA node: its CPU list as the kernel prints it
// ("0-71"), empty for a node without CPUs (a Grace GPU's memory).
type NUMANode struct {
	CPUs string
}

// Root is one PCI host bridge, pci0000:<Bus>, with one root port per slot.
type Root struct {
	Domain uint16 // PCI domain (segment): 0000 unless set
	Bus    uint8
	NUMA   int // written to every numa_node below; -1 for unknown
	Ports  []Slot
	// VMBus puts the host bridge below a Hyper-V VMBus device, as Azure
	// VMs show PCI passthrough: /sys/devices/LNXSYSTM:00/…/VMBUS:00/<guid>/
	// pciDDDD:BB, with the one device of Ports straight on the root bus
	// (no root port, no switch).
	VMBus bool
}

// Slot is what sits behind a root port or a switch downstream port:
// exactly one of a switch, a GPU, a NIC card or another PCI function.
type Slot struct {
	Switch []Slot // a PCIe switch: one downstream port per entry
	GPU    *GPU
	Card   *Card
	Other  *Other
}

// GPU is an NVIDIA GPU bound to the nvidia driver.
type GPU struct {
	Model string // "NVIDIA H100 80GB HBM3"
	// MemoryNode, when set, is the GPU's own NUMA node (its memory, no
	// CPUs), written as its numa_node while its local_cpulist stays its
	// root's: a GPU on a chip-to-chip link to a Grace CPU.
	MemoryNode *int
}

// Card is an RDMA NIC: one PCI function per entry of Funcs.
type Card struct {
	Model string // "ConnectX-7"
	Funcs []Func
	// Bond, when set, makes the functions one RoCE LAG device of this name
	// (mlx5_bond_0) on the bond master "bond0" over the functions' netdevs.
	Bond string
	// Slot is the PCIe slot number in Ethernet names (ens<slot>f0np0);
	// 0 assigns the next free one.
	Slot int
	// Master, when set, enslaves the functions' netdevs to a Linux bond of
	// this name without a RoCE LAG: each function keeps its RDMA device
	// (mlx5_0, mlx5_1), its netdev a port of the bond.
	Master string
}

// Func is one PCI function of a card and its RDMA device.
type Func struct {
	RDMA      string // mlx5_0 (ignored for bonded cards)
	LinkLayer string // "InfiniBand" or "Ethernet"
	State     string // port state, "" for ACTIVE
	PhysState string // phys_state ("Polling": no cable), "" for what State implies
	Rate      string // "" for a default matching the link layer
	Netdev    string // "" for a systemd-style name
	NoNetdev  bool   // no netdev at all (IPoIB not loaded)
	VFs       []Func // SR-IOV virtual functions (sriov_numvfs = len(VFs))
	// TotalVFs is the PF's sriov_totalvfs: how many VFs it can have (0:
	// len(VFs)). A function with TotalVFs set and no VFs is an SR-IOV PF
	// with sriov_numvfs 0. The kernel reserves routing IDs for all of them.
	TotalVFs int
	// Driver is a VF's driver: "" for the card's VF driver (mlx5_core,
	// igbvf), "vfio-pci" for a VF handed to a VM or a DPDK application (no
	// netdev, no RDMA device).
	Driver string
	// NoRDMA writes the function without an RDMA device (a VF whose
	// RDMA device is not registered); functions of an Intel 82576 (igb)
	// card never have one.
	NoRDMA bool
	SFs    []Func // mlx5 sub-functions on the auxiliary bus, under this function
	// MorePorts are ports 2, 3, … of this function's RDMA device, each with
	// its own netdev on the same PCI function (dev_port 1, 2, …) and its own
	// umad/issm, as a dual-port ConnectX-3 (mlx4) lays out one card; the
	// fields above describe port 1.
	MorePorts []Port
}

// Port is one more port of a function's RDMA device.
type Port struct {
	LinkLayer string // "" for the function's
	State     string // "" for ACTIVE
	PhysState string // phys_state ("Polling": no cable), "" for what State implies
	Rate      string // "" for a default matching the link layer
	Netdev    string // "" for port 1's netdev name + "d<dev_port>" (systemd's name)
	NoNetdev  bool
}

// Other is any other PCI function, for example an NVSwitch bound to the
// nvidia driver.
type Other struct {
	Vendor, Device, Class, Driver string
}

// SoftRoCE is a software RDMA device (rxe) on a netdev: a virtual one
// (written for it), or the netdev of a card of this Host.
type SoftRoCE struct {
	RDMA   string // rxe0
	Netdev string // the netdev it runs on
}

func (s Slot) validate(where string) error {
	kinds := 0
	for _, set := range []bool{s.Switch != nil, s.GPU != nil, s.Card != nil, s.Other != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("%s: a slot holds exactly one of Switch, GPU, Card, Other (has %d)", where, kinds)
	}
	if s.Card != nil {
		return s.Card.validate(where)
	}
	return nil
}

func (c *Card) validate(where string) error {
	if len(c.Funcs) == 0 || len(c.Funcs) > 8 {
		return fmt.Errorf("%s: card needs 1 to 8 Funcs, has %d", where, len(c.Funcs))
	}
	if c.Bond != "" && c.Master != "" {
		return fmt.Errorf("%s: card has both Bond (a RoCE LAG) and Master (a plain bond): keep one", where)
	}
	if c.Bond != "" && len(c.Funcs) < 2 {
		return fmt.Errorf("%s: bonded card %s needs at least 2 Funcs", where, c.Bond)
	}
	for i, f := range c.Funcs {
		if c.Bond != "" && f.LinkLayer != "Ethernet" {
			return fmt.Errorf("%s func %d: bonded card %s needs Ethernet functions", where, i, c.Bond)
		}
		if err := f.validate(fmt.Sprintf("%s func %d", where, i), c.Bond != "" || !modelOf(c.Model).rdma); err != nil {
			return err
		}
		if len(f.VFs) > 0 && c.Bond != "" {
			return fmt.Errorf("%s func %d: VFs on a bonded card are not modelled", where, i)
		}
	}
	return nil
}

// validate checks a function's description; unnamed is true where its
// RDMA name may be empty (a bonded card's functions, a card without RDMA).
func (f Func) validate(where string, unnamed bool) error {
	if f.RDMA == "" && !unnamed && !f.NoRDMA && f.Driver != vfioDriver {
		return fmt.Errorf("%s: RDMA name is empty (set it, e.g. mlx5_0)", where)
	}
	switch f.LinkLayer {
	case "InfiniBand", "Ethernet":
	default:
		return fmt.Errorf("%s: LinkLayer %q: want InfiniBand or Ethernet", where, f.LinkLayer)
	}
	if _, ok := physStateNumbers[f.PhysState]; f.PhysState != "" && !ok {
		return fmt.Errorf("%s: PhysState %q: want a phys_state name such as Polling, Disabled or LinkUp", where, f.PhysState)
	}
	for i, p := range f.MorePorts {
		switch p.LinkLayer {
		case "", "InfiniBand", "Ethernet":
		default:
			return fmt.Errorf("%s port %d: LinkLayer %q: want InfiniBand, Ethernet or empty", where, i+2, p.LinkLayer)
		}
		if unnamed || len(f.SFs) > 0 || len(f.VFs) > 0 {
			return fmt.Errorf("%s: MorePorts with a bond, VFs or SFs are not modelled", where)
		}
	}
	if f.TotalVFs != 0 && f.TotalVFs < len(f.VFs) {
		return fmt.Errorf("%s: TotalVFs %d is below its %d VFs (sriov_numvfs cannot exceed sriov_totalvfs)", where, f.TotalVFs, len(f.VFs))
	}
	if f.Driver != "" && f.Driver != vfioDriver {
		return fmt.Errorf("%s: Driver %q: want \"\" (the card's) or %q", where, f.Driver, vfioDriver)
	}
	for i, vf := range f.VFs {
		if len(vf.VFs) > 0 || vf.TotalVFs > 0 {
			return fmt.Errorf("%s vf %d: a VF cannot have VFs", where, i)
		}
		if err := vf.validate(fmt.Sprintf("%s vf %d", where, i), unnamed); err != nil {
			return err
		}
	}
	return nil
}
