package harness

import (
	"fmt"
	"sort"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// Machine is a fake node root written by fakesys whose NIC netdevs carry
// names unique to one harness run, so real stand-in links can carry them.
type Machine struct {
	Root string
	Spec *fakesys.Spec
	// Netdevs maps each RDMA device that has a netdev to that netdev's name.
	Netdevs map[string]string
}

// WriteMachine writes the built-in machine below root (which must be empty
// or absent), naming the netdev of the i-th NIC prefix+"n"+i.
func WriteMachine(root, machine, prefix string) (*Machine, error) {
	host, ok := fakesys.Machine(machine)
	if !ok {
		return nil, fmt.Errorf("machine %q: unknown (built-in machines: %v)", machine, fakesys.Names())
	}
	return WriteHost(root, machine, host, prefix)
}

// WriteHost is WriteMachine for a machine described by the caller (name
// seeds its GUIDs and GPU UUIDs).
func WriteHost(root, machine string, host fakesys.Host, prefix string) (*Machine, error) {
	names := nicsWithNetdevs(host)
	netdevs := make(map[string]string, len(names))
	for i, nic := range names {
		netdevs[nic] = fmt.Sprintf("%sn%d", prefix, i)
	}
	spec, err := fakesys.WriteHost(root, machine, host, fakesys.Options{Netdevs: netdevs})
	if err != nil {
		return nil, fmt.Errorf("write machine %s: %w", machine, err)
	}
	for _, nic := range spec.NICs {
		if want, ok := netdevs[nic.Name]; ok && nic.Netdev != want {
			return nil, fmt.Errorf("write machine %s: %s got netdev %q, asked for %q", machine, nic.Name, nic.Netdev, want)
		}
	}
	return &Machine{Root: root, Spec: spec, Netdevs: netdevs}, nil
}

// nicsWithNetdevs lists the RDMA devices of a machine that have a netdev
// (a bonded card's bond device stands for its bond master).
func nicsWithNetdevs(host fakesys.Host) []string {
	var names []string
	for _, root := range host.Roots {
		for _, slot := range root.Ports {
			names = append(names, slotNICs(slot)...)
		}
	}
	for _, soft := range host.SoftRoCE {
		names = append(names, soft.RDMA)
	}
	sort.Strings(names)
	return names
}

func slotNICs(s fakesys.Slot) []string {
	var out []string
	for _, child := range s.Switch {
		out = append(out, slotNICs(child)...)
	}
	if s.Card == nil {
		return out
	}
	if s.Card.Bond != "" {
		return append(out, s.Card.Bond)
	}
	for _, f := range s.Card.Funcs {
		for _, fn := range append([]fakesys.Func{f}, f.VFs...) {
			if !fn.NoNetdev {
				out = append(out, fn.RDMA)
			}
		}
	}
	return out
}

// NIC returns the written NIC of that RDMA name.
func (m *Machine) NIC(name string) (fakesys.NICSpec, bool) { return m.Spec.NIC(name) }

// GPUUUIDs returns the UUIDs of the GPUs with these indices, as the NVIDIA
// device plugin reports them to the kubelet.
func (m *Machine) GPUUUIDs(indices ...int) ([]string, error) {
	out := make([]string, 0, len(indices))
	for _, i := range indices {
		if i < 0 || i >= len(m.Spec.GPUs) {
			return nil, fmt.Errorf("machine %s has no GPU %d (it has %d)", m.Spec.Machine, i, len(m.Spec.GPUs))
		}
		out = append(out, m.Spec.GPUs[i].UUID)
	}
	return out, nil
}
