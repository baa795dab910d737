package placement

import (
	"fmt"
	"slices"

	"github.com/railcni/rail/pkg/topology"
)

// In exclusive RDMA netns mode an RDMA device belongs to one netns, so
// moving one port's netdev into a pod moves the whole device, with every
// port of it. These rules make placement see that: a port whose sibling
// sits in a pod is taken too, and one pod never gets two ports of one
// device (the second move would find the device already gone).

// excludeSiblings adds to exclude every port of a device one of whose
// ports is moved into a pod.
func excludeSiblings(m *topology.Machine, exclude map[string]string, moved map[string]string) {
	for nic, pod := range moved {
		held, ok := m.NICByName(nic)
		if !ok {
			continue
		}
		for _, sib := range m.NICs {
			if sib.Name == nic || !sib.SharesDevice(held) {
				continue
			}
			if _, already := exclude[sib.Name]; !already {
				exclude[sib.Name] = fmt.Sprintf("RDMA device %s moved into pod %s with %s (exclusive RDMA netns mode: a device is in one netns)",
					held.RDMADevice(), pod, nic)
			}
		}
	}
}

// oneDevicePerPod folds picks of the same RDMA device into the first one:
// the ports of a device share its PCI function, so the GPUs of the later
// pick are exactly as close to the first.
func oneDevicePerPod(picks []Pick) []Pick {
	var out []Pick
	for _, p := range picks {
		i := slices.IndexFunc(out, func(o Pick) bool { return o.NIC.SharesDevice(p.NIC) })
		if i < 0 {
			out = append(out, p)
			continue
		}
		out[i].GPUs = append(out[i].GPUs, p.GPUs...)
		if p.Class < out[i].Class {
			out[i].Class, out[i].Reason = p.Class, p.Reason
		}
	}
	return out
}
