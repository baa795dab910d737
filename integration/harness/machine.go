package harness

import (
	"fmt"
	"os"
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
	names, err := nicsWithNetdevs(machine)
	if err != nil {
		return nil, err
	}
	netdevs := make(map[string]string, len(names))
	for i, nic := range names {
		netdevs[nic] = fmt.Sprintf("%sn%d", prefix, i)
	}
	spec, err := fakesys.Write(root, machine, fakesys.Options{Netdevs: netdevs})
	if err != nil {
		return nil, fmt.Errorf("write machine %s: %w", machine, err)
	}
	return &Machine{Root: root, Spec: spec, Netdevs: netdevs}, nil
}

// nicsWithNetdevs writes the machine once into a scratch directory to
// learn which RDMA devices it has and which of them have a netdev.
func nicsWithNetdevs(machine string) ([]string, error) {
	scratch, err := os.MkdirTemp("", "rail-machine-probe-")
	if err != nil {
		return nil, fmt.Errorf("probe machine %s: %w", machine, err)
	}
	defer os.RemoveAll(scratch)
	spec, err := fakesys.Write(scratch, machine, fakesys.Options{})
	if err != nil {
		return nil, fmt.Errorf("probe machine %s: %w", machine, err)
	}
	var names []string
	for _, nic := range spec.NICs {
		if nic.Netdev != "" {
			names = append(names, nic.Name)
		}
	}
	sort.Strings(names)
	return names, nil
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
