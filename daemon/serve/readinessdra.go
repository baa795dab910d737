package serve

import (
	"maps"
	"net/netip"
	"slices"

	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/readiness"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// gpuSourceKubelet is where a DRA pod's GPUs came from, as doctor prints
// it (a leased pod's are the ones placement saw).
const gpuSourceKubelet = "the kubelet's PodResources (device plugin or DRA claims)"

// withDRAPods adds the pods whose NICs DRA NIC drivers gave (the DRAHeld
// table): each port a rail checked like a lease's, found in the pod's
// netns by the netdev name the driver's slice gives, its addresses
// compared without a prefix length (the slice lists none), and the
// containers' records carrying the driver's device nodes. A pod already
// listed for its leases gets its DRA rails beside them. raild only reads:
// the driver owns the NIC.
func (r *railReadiness) withDRAPods(out []readiness.Pod, index map[string]int, containers func(string) []nri.ContainerRecord,
	m *topology.Machine) []readiness.Pod {
	held := r.held.Pods()
	for _, sandbox := range slices.Sorted(maps.Keys(held)) {
		pod := held[sandbox]
		var recs []nri.ContainerRecord
		if containers != nil {
			recs = containers(sandbox)
		}
		i, ok := index[sandbox]
		if !ok {
			i = len(out)
			index[sandbox] = i
			p := readiness.Pod{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Sandbox: sandbox,
				Containers: recordsToContainers(recs), GPUs: podGPUs(pod.GPUs, m)}
			if len(p.GPUs) > 0 {
				p.GPUSource = gpuSourceKubelet
			}
			out = append(out, p)
		}
		for _, nic := range pod.NICs {
			out[i].Rails = append(out[i].Rails, r.draRail(pod, nic, recs))
		}
	}
	return out
}

// draRail is one port a DRA NIC driver gave a pod, as the checks see it.
func (r *railReadiness) draRail(pod podinfo.PodDRANICs, nic podinfo.DRANIC, recs []nri.ContainerRecord) readiness.Rail {
	rail := readiness.Rail{Netns: pod.Netns, IfName: nic.IfName, PCI: nic.PCI, Match: readiness.MatchAddressOnly,
		DRA:    &readiness.DRAClaim{Driver: nic.Device.Driver, Claim: nic.Device.Claim, Device: nic.Device.String()},
		Device: nic.RDMADevice, Port: nic.Port, LinkLayer: nic.LinkLayer, Exclusive: r.rdmaNetns == rdma.NetnsExclusive,
		GIDIndex: draGIDIndex(recs, nic.NIC), Placed: readiness.Placement{NIC: &api.NIC{RDMADevice: nic.RDMADevice,
			Port: nic.Port, LinkLayer: nic.LinkLayer, Netdev: nic.IfName, PCI: nic.PCI}}}
	for _, a := range nic.Addrs {
		if !a.IsLinkLocalUnicast() { // the kernel makes the link-local one anew in the pod
			rail.Addresses = append(rail.Addresses, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	if a, ok := nic.GIDAddress(); ok {
		rail.GIDAddress = a
	}
	return rail
}

// draGIDIndex is the GID index the containers holding the NIC were given
// (the first that has one); else the pod's.
func draGIDIndex(recs []nri.ContainerRecord, nic string) int {
	for _, rec := range recs {
		holds := slices.ContainsFunc(rec.DriverDevices, func(d nri.DriverDeviceRecord) bool { return d.NIC == nic })
		if holds && rec.GIDIndex >= 0 {
			return rec.GIDIndex
		}
	}
	return gidIndexOf(recs)
}

// podGPUs are GPU indices with their PCI addresses on the node.
func podGPUs(indices []int, m *topology.Machine) []api.PodGPU {
	var out []api.PodGPU
	for _, idx := range indices {
		g := api.PodGPU{Index: idx}
		for _, mg := range m.GPUs {
			if mg.Index == idx {
				g.PCI = mg.PCI
			}
		}
		out = append(out, g)
	}
	return out
}
