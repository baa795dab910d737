// Package fakesys writes whole machines as folders: a root laid out like a
// real node's sysfs and procfs (real directories under
// /sys/devices/pci…, relative symlinks from /sys/bus/pci, /sys/class/*,
// /proc/driver/nvidia/gpus/<BDF>/information), so discovery, the daemon
// and integration tests can run against a known GPU node.
package fakesys

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
)

// Options change details of what Write produces.
type Options struct {
	// Netdevs maps an RDMA device name to the netdev name to write for it
	// (tests map NICs to real veth ends they create). For a bonded card it
	// renames the bond master.
	Netdevs map[string]string
	// DevNumbers overrides the major and minor of char devices by name
	// (uverbs0, umad1, issm1, rdma_cm).
	DevNumbers map[string][2]uint32
	// GPUUUIDs sets the UUID of GPU i (in index order) to GPUUUIDs[i], so a
	// machine can carry the IDs a (fake) device plugin reports; GPUs beyond
	// the list, or given "", keep the UUID derived from the machine name.
	GPUUUIDs []string
}

// Spec is what Write wrote, for tests to assert against.
type Spec struct {
	Machine string
	Root    string
	// Nodes is how many NUMA nodes /sys/devices/system/node shows (0: the
	// folder is not written).
	Nodes  int
	GPUs   []GPUSpec // in index (PCI) order
	NICs   []NICSpec // in the order they were written (PCI order, then software ones)
	PFs    []PFSpec  // SR-IOV physical functions, in PCI order
	RdmaCM DevSpec
}

// GPUSpec is one GPU as written.
type GPUSpec struct {
	Index int
	PCI   string
	UUID  string
	Model string
	Minor int
	NUMA  int
}

// NICSpec is one RDMA device as written.
type NICSpec struct {
	Name      string
	PCI       string // "" for software devices
	Netdev    string // "" when written without one
	Slaves    []string
	LinkLayer string
	State     string
	NUMA      int
	Virtual   bool
	VF        bool
	Bond      bool
	Uverbs    DevSpec
	Umad      DevSpec
	Issm      *DevSpec // nil on Ethernet ports
	MorePorts []PortSpec
}

// PortSpec is port 2, 3, … of an RDMA device as written.
type PortSpec struct {
	Num       int
	Netdev    string
	DevPort   int // the netdev's dev_port (Num-1)
	LinkLayer string
	State     string
	Umad      DevSpec
	Issm      *DevSpec // nil on Ethernet ports
}

// DevSpec is a char device's name and numbers.
type DevSpec struct {
	Name  string
	Major uint32
	Minor uint32
}

// NIC returns the written NIC of that name.
func (s *Spec) NIC(name string) (NICSpec, bool) {
	for _, n := range s.NICs {
		if n.Name == name {
			return n, true
		}
	}
	return NICSpec{}, false
}

// Targets lists the written RDMA devices as rail places them: one entry
// per port, port 1 under the device's name and port N as "<device>:N"
// (with that port's netdev, state, link layer, umad and issm).
func (s *Spec) Targets() []NICSpec {
	var out []NICSpec
	for _, n := range s.NICs {
		out = append(out, n)
		for _, p := range n.MorePorts {
			t := n
			t.Name = n.Name + ":" + strconv.Itoa(p.Num)
			t.Netdev, t.LinkLayer, t.State, t.Umad, t.Issm = p.Netdev, p.LinkLayer, p.State, p.Umad, p.Issm
			t.MorePorts = nil
			out = append(out, t)
		}
	}
	return out
}

// Names lists the built-in machines.
func Names() []string {
	all := builtins()
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Machine returns the description of a built-in machine.
func Machine(name string) (Host, bool) {
	build, ok := builtins()[name]
	if !ok {
		return Host{}, false
	}
	return build(), true
}

// Write writes the built-in machine of that name below root, which must
// be empty or absent.
func Write(root, machine string, opt Options) (*Spec, error) {
	host, ok := Machine(machine)
	if !ok {
		return nil, fmt.Errorf("machine %q: unknown (built-in machines: %v)", machine, Names())
	}
	return WriteHost(root, machine, host, opt)
}

// WriteHost writes a described machine below root, which must be empty or
// absent; name seeds GUIDs and GPU UUIDs.
func WriteHost(root, name string, host Host, opt Options) (*Spec, error) {
	if err := checkEmpty(root); err != nil {
		return nil, err
	}
	b := newBuilder(root, name, opt)
	if err := b.host(host); err != nil {
		return nil, fmt.Errorf("machine %q: %w", name, err)
	}
	if b.f.err != nil {
		return nil, fmt.Errorf("machine %q: %w", name, b.f.err)
	}
	slices.SortFunc(b.spec.GPUs, func(x, y GPUSpec) int { return x.Minor - y.Minor })
	return b.spec, nil
}

func checkEmpty(root string) error {
	if root == "" {
		return fmt.Errorf("fake root is empty: give a directory such as t.TempDir()")
	}
	entries, err := os.ReadDir(root)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("fake root %s: %w", root, err)
	case len(entries) > 0:
		return fmt.Errorf("fake root %s is not empty: write a machine into a fresh directory", root)
	}
	return nil
}
