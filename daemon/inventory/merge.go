package inventory

import (
	"slices"

	"github.com/railcni/rail/pkg/topology"
)

// merge keeps a held NIC known while it sits in a pod: when the host shows
// it without its netdev (shared RDMA netns mode: the netdev moved) or not at all
// (exclusive mode: the RDMA device moved too), its last host record is
// kept and the NIC is listed in InPod with its holder; a held NIC read
// without the char devices it had keeps them (keepCharDevs). A NIC nobody
// holds is reported exactly as discovered.
func merge(lastSeen func(string) (topology.NIC, bool), found *topology.Machine, holders map[string]string) (*topology.Machine, map[string]string) {
	inPod := map[string]string{}
	nics := slices.Clone(found.NICs)
	changed := false
	for i, nic := range nics {
		pod, held := holders[nic.Name]
		if !held {
			continue
		}
		last, seen := lastSeen(nic.Name)
		if nic.Netdev != "" {
			if seen && lacksCharDevs(nic, last) {
				nics[i], changed = keepCharDevs(nic, last), true
			}
			continue
		}
		inPod[nic.Name] = pod
		if seen && last.Netdev != "" {
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
	if len(inPod) == 0 && !changed {
		return found, inPod
	}
	return found.WithNICs(nics, found.Problems), inPod
}

// keepCharDevs fills the char devices a held NIC is read without from its
// last record. Moving an RDMA device between netns unregisters and
// re-registers its uverbs/umad devices while the device itself stays
// listed, so a rescan in that moment reads a torn record; the pod holding
// the NIC keeps using the devices it had.
func keepCharDevs(now, last topology.NIC) topology.NIC {
	if now.Uverbs == nil && last.Uverbs != nil {
		now.Uverbs, now.UverbsName = last.Uverbs, last.UverbsName
	}
	now.Ports = slices.Clone(now.Ports) // found's own ports stay as read
	for i := range now.Ports {
		if i < len(last.Ports) && now.Ports[i].Umad == nil {
			now.Ports[i].Umad, now.Ports[i].Issm = last.Ports[i].Umad, last.Ports[i].Issm
		}
	}
	return now
}

// lacksCharDevs reports whether now lacks a char device last had.
func lacksCharDevs(now, last topology.NIC) bool {
	if now.Uverbs == nil && last.Uverbs != nil {
		return true
	}
	for i := range now.Ports {
		if i < len(last.Ports) && now.Ports[i].Umad == nil && last.Ports[i].Umad != nil {
			return true
		}
	}
	return false
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
