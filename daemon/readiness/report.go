package readiness

import (
	"net/netip"
	"slices"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// Report is `raild doctor --pod`: the pod's rails and containers as they
// are now, checked now. ok is false when no pod of that name holds rail
// interfaces on this node.
func (t *Tracker) Report(namespace, name string) (*api.PodReport, bool) {
	for _, p := range t.opt.Pods() {
		if p.Namespace == namespace && p.Name == name {
			return t.opt.Checker.Report(p), true
		}
	}
	return nil, false
}

// Report checks a pod and describes it.
func (c *Checker) Report(p Pod) *api.PodReport {
	res := c.Run(p)
	r := &api.PodReport{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Sandbox: p.Sandbox, GPUs: slices.Clone(p.GPUs), GPUSource: p.GPUSource,
		Ready: res.Ready(), Checks: res.Checks}
	for _, rail := range p.Rails {
		r.Interfaces = append(r.Interfaces, c.describeRail(rail))
	}
	for _, ctr := range p.Containers {
		r.Containers = append(r.Containers, c.describeContainer(ctr))
	}
	return r
}

func (c *Checker) describeRail(rail Rail) api.PodInterface {
	pi := api.PodInterface{Name: rail.subject(), Network: rail.Placed.Network, Mode: rail.Mode, NIC: rail.Placed.NIC,
		Distance: rail.Placed.Distance, Reason: rail.Placed.Reason, Distances: rail.Placed.Distances, ExclusiveRDMA: rail.Exclusive}
	if pi.NIC == nil {
		pi.NIC = &api.NIC{RDMADevice: rail.Device, Port: rail.Port, LinkLayer: rail.LinkLayer}
	}
	for _, a := range rail.Addresses {
		pi.Addresses = append(pi.Addresses, AddressText(a, rail.Match))
	}
	if rail.DRA != nil {
		pi.DRA = &api.PodDRAClaim{Driver: rail.DRA.Driver, Claim: rail.DRA.Claim, Device: rail.DRA.Device}
	}
	if state, err := c.ports.State(rail.Device, rail.Port); err == nil {
		pi.PortState = state
	} else {
		pi.PortState = "unknown (" + err.Error() + ")"
	}
	idx := rail.GIDIndex
	if addr, ok := gidAddressOf(rail); idx < 0 && ok && pi.NIC.LinkLayer != topology.InfiniBand {
		// No index given: where the port holds the pod's address.
		if found, err := c.ports.GIDIndex(rail.Device, rail.Port, addr); err == nil {
			idx = found
		}
	}
	if idx >= 0 {
		pi.GIDIndex = &idx
		if gid, err := c.ports.GID(rail.Device, rail.Port, idx); err == nil {
			pi.GID = gid.String()
		}
	}
	return pi
}

func (c *Checker) describeContainer(ctr Container) api.PodContainer {
	v := c.reads.view(ctr)
	pc := api.PodContainer{Name: ctr.Name, Pid: ctr.Pid, Present: v.Present, Memlock: v.MemlockText(),
		MemlockWanted: ctr.Memlock, Env: v.Env}
	for _, d := range ctr.Devices {
		pc.Injected = append(pc.Injected, d.Path)
	}
	for _, d := range ctr.DriverDevices {
		pc.DriverInjected = append(pc.DriverInjected, d.Path)
	}
	return pc
}

// gidAddressOf is the address whose GID the rail's index names: the DRA
// rail's chosen one, else its first.
func gidAddressOf(rail Rail) (netip.Addr, bool) {
	if rail.GIDAddress.IsValid() {
		return rail.GIDAddress, true
	}
	if len(rail.Addresses) > 0 {
		return rail.Addresses[0].Addr(), true
	}
	return netip.Addr{}, false
}
