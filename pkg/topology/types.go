// Package topology models a GPU node from sysfs and procfs alone: GPUs, RDMA
// devices, their netdevs and char devices, the PCIe tree and NUMA nodes, the
// distance classes NCCL uses, and the choice of NICs for a set of GPUs.
// Every read goes through one root directory, so a machine can be a folder.
// It imports nothing else of the project.
package topology

import "strings"

// Class is a GPU-to-NIC distance class, in nvidia-smi / NCCL terms.
// Lower is closer.
type Class int

const (
	PIX  Class = iota // through at most one PCIe switch
	PXB               // through several switches, not the host bridge
	PHB               // through the host bridge of one root complex
	P2C               // a C2C-attached GPU (Grace) and a NIC on the same CPU socket
	NODE              // different root complexes, same NUMA node
	SYS               // across NUMA nodes
)

// CharDev is one device node with the numbers read from sysfs.
type CharDev struct {
	Name  string `json:"name"` // uverbs0, umad1, issm1, rdma_cm
	Path  string `json:"path"` // /dev/infiniband/uverbs0 (never prefixed by the root)
	Major uint32 `json:"major"`
	Minor uint32 `json:"minor"`
}

// PortActive is the state of a port that can carry traffic, as the kernel
// writes it in ports/<n>/state ("4: ACTIVE") and Port.State and NIC.State
// hold it. Every other state (DOWN, INIT, ARMED, ...) cannot.
const PortActive = "ACTIVE"

// Port is one port of an RDMA device.
type Port struct {
	Num       int       `json:"num"`
	State     string    `json:"state"`     // ACTIVE, DOWN, INIT, ARMED, ...
	PhysState string    `json:"physState"` // LinkUp, Disabled, Polling, ...
	LinkLayer LinkLayer `json:"linkLayer"`
	Rate      string    `json:"rate,omitempty"`
	Netdevs   []string  `json:"netdevs,omitempty"`
	Umad      *CharDev  `json:"umad,omitempty"`
	Issm      *CharDev  `json:"issm,omitempty"`
}

// GPU is one NVIDIA PCI function bound to the nvidia driver.
type GPU struct {
	Index int    `json:"index"` // in PCI bus order (nvidia-smi order)
	PCI   string `json:"pci"`
	UUID  string `json:"uuid,omitempty"`
	Minor int    `json:"minor"` // /dev/nvidiaN; -1 unknown
	NUMA  int    `json:"numa"`  // -1 unknown
	// Path is the chain of PCI addresses from the root port down to the
	// device's parent bridge; Root is the host bridge (pci0000:00).
	Root string   `json:"root"`
	Path []string `json:"-"`
	// CPUNode is the NUMA node holding the CPUs local to the GPU
	// (local_cpulist); -1 unknown. C2C marks a GPU attached to its CPU by
	// a chip-to-chip link (NVIDIA Grace): its numa_node is a node of its
	// own memory, without CPUs, and only its CPU socket places it.
	CPUNode int  `json:"cpuNode"`
	C2C     bool `json:"c2c,omitempty"`
}

// NIC is one placement target: one port of an RDMA device
// (/sys/class/infiniband/<device>/ports/<port>). A single-port device is one
// NIC named as the device; a dual-port one is two, "mlx4_0" (port 1) and
// "mlx4_0:2" (see TargetName), sharing PCI function, uverbs and place.
type NIC struct {
	Name        string    `json:"name"`                  // mlx5_0, mlx4_0:2, rxe0, mlx5_bond_0
	Device      string    `json:"device,omitempty"`      // RDMA device: mlx4_0 for mlx4_0:2
	Port        int       `json:"port,omitempty"`        // its port number
	DevicePorts int       `json:"devicePorts,omitempty"` // how many ports the device has
	PCI         string    `json:"pci,omitempty"`
	Netdev      string    `json:"netdev,omitempty"` // the port's (first) netdev
	State       string    `json:"state"`            // the port's state
	LinkLayer   LinkLayer `json:"linkLayer"`        // the port's link layer
	Rate        string    `json:"rate,omitempty"`
	NUMA        int       `json:"numa"`
	CPUNode     int       `json:"cpuNode"` // the NUMA node holding its local CPUs; -1 unknown
	NodeGUID    string    `json:"nodeGUID,omitempty"`
	VF          bool      `json:"vf,omitempty"`
	PF          string    `json:"pf,omitempty"` // PCI address of the PF for a VF or an SF
	SF          bool      `json:"sf,omitempty"` // mlx5 sub-function: an auxiliary device of PCI function PF
	Bond        bool      `json:"bond,omitempty"`
	Virtual     bool      `json:"virtual,omitempty"` // no PCI function (rxe, siw)
	// NetdevOnly marks an Ethernet PCI function without an RDMA device,
	// placed by its netdev on a softRoCE node (Options.NetdevNICs,
	// netdevnic.go): Name and Netdev are the netdev; no Device, Port,
	// uverbs or GID table; State is the netdev's (PortActive when up).
	NetdevOnly bool     `json:"netdevOnly,omitempty"`
	Uverbs     *CharDev `json:"uverbsDev,omitempty"` // the device's, shared by its ports
	UverbsName string   `json:"uverbs,omitempty"`
	Ports      []Port   `json:"ports"` // this target's port (none when the device shows none)
	Root       string   `json:"root,omitempty"`
	Path       []string `json:"-"`

	// Links are the netdev's master, uppers and bonding (nil: none).
	Links *NetdevLinks `json:"links,omitempty"`
}

// Problem is a device that was skipped or reported partially, with why.
type Problem struct {
	Device string `json:"device"`
	Reason string `json:"reason"`
}

// Machine is what Discover found under one root.
type Machine struct {
	Root string `json:"-"`
	GPUs []GPU  `json:"gpus"`
	NICs []NIC  `json:"nics"`
	// PFs are the SR-IOV physical functions with their VFs, in PCI order.
	PFs      []PF      `json:"pfs,omitempty"`
	RdmaCM   *CharDev  `json:"rdmaCM,omitempty"`
	Problems []Problem `json:"problems,omitempty"`
	// FlatPCI is set when sysfs carries no PCIe switch information: every
	// GPU and NIC sits alone on a PCI root of its own (Hyper-V VMs).
	FlatPCI bool `json:"flatPCI,omitempty"`
	// TopologyFile is the NCCL topology file whose distances override
	// sysfs for the pairs it names; nil without one.
	TopologyFile *TopoFile `json:"-"`
	// NetdevNICs is set when the NICs include netdev-only ones
	// (Options.NetdevNICs: a softRoCE node).
	NetdevNICs bool `json:"netdevNICs,omitempty"`

	idx *index // selection index, built by Discover and NewMachine
}

// PodSoftRoCEPrefix starts the name of every Soft-RoCE device (rxe) rail
// creates inside a pod on a node in softRoCE mode (rdma.SoftRoCEName). Such
// a device is a pod's, never a NIC to place: Discover leaves it out, and
// Sysfs.PodSoftRoCE reads it. The prefix and PodSoftRoCEHexDigits hex
// digits make 15 characters: UCX keeps a memory domain's name in 16 bytes
// (UCT_MD_NAME_MAX, NUL included) and cuts a longer device name, after
// which it no longer finds the device and offers only TCP (the fabric
// rig's pods logged "IB device railrxe_81415dd not found" for a 20-character
// railrxe_81415dd1521a).
const PodSoftRoCEPrefix = "railrxe"

// PodSoftRoCEHexDigits is how many lower-case hex digits follow
// PodSoftRoCEPrefix in a pod's soft-RoCE device name.
const PodSoftRoCEHexDigits = 8

// IsPodSoftRoCE reports whether an RDMA device name is one rail made in a
// pod: the prefix and exactly PodSoftRoCEHexDigits lower-case hex digits
// (an rxe a user named railrxe0 or railrxe_eth1 is not rail's).
func IsPodSoftRoCE(device string) bool {
	digits, ok := strings.CutPrefix(device, PodSoftRoCEPrefix)
	if !ok || len(digits) != PodSoftRoCEHexDigits {
		return false
	}
	for _, c := range digits {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
