package inventory

import (
	"slices"

	"github.com/railcni/rail/pkg/topology"
)

// merge keeps a held NIC known while it sits in a pod: when the host shows
// it without its netdev (shared RDMA mode: the netdev moved) or not at all
// (exclusive mode: the RDMA device moved too), its last host record is
// kept and the NIC is listed in InPod with its holder. A NIC nobody holds
// is reported exactly as discovered.
func merge(lastSeen func(string) (topology.NIC, bool), found *topology.Machine, holders map[string]string) (*topology.Machine, map[string]string) {
	inPod := map[string]string{}
	nics := slices.Clone(found.NICs)
	for i, nic := range nics {
		pod, held := holders[nic.Name]
		if !held || nic.Netdev != "" {
			continue
		}
		inPod[nic.Name] = pod
		if last, ok := lastSeen(nic.Name); ok && last.Netdev != "" {
			nics[i] = keepLive(last, nic)
		}
	}
	for name, pod := range holders {
		if _, ok := found.NICByName(name); ok {
			continue
		}
		if last, ok := lastSeen(name); ok {
			nics = append(nics, last)
			inPod[name] = pod
		}
	}
	if len(inPod) == 0 {
		return found, inPod
	}
	m := topology.NewMachine(found.GPUs, nics)
	m.Root, m.RdmaCM, m.Problems = found.Root, found.RdmaCM, found.Problems
	return m, inPod
}

// keepLive takes the last host record (netdev name, PCI place) and the
// live port state and char devices of what the host shows now.
func keepLive(last, now topology.NIC) topology.NIC {
	out := last
	out.State, out.Ports = now.State, slices.Clone(now.Ports)
	for i := range out.Ports {
		if len(out.Ports[i].Netdevs) == 0 && i < len(last.Ports) {
			out.Ports[i].Netdevs = last.Ports[i].Netdevs
		}
	}
	if now.Uverbs != nil {
		out.Uverbs, out.UverbsName = now.Uverbs, now.UverbsName
	}
	return out
}
