package nri

import (
	"maps"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// A node in softRoCE mode gives a leased pod's containers the pod's own
// Soft-RoCE devices (the rxe the plugin made on each of its interfaces),
// never the node's NIC the interface came from: their uverbs, rdma_cm
// and the env naming them. They are read from sysfs when the pod's record
// is built (podrecord.go).

// softRoCEName is the rxe of a lease's interface ("" for a lease without a NIC).
func softRoCEName(l ipam.Lease) string {
	if len(l.Holds()) == 0 {
		return ""
	}
	return rdma.SoftRoCEName(l.Sandbox, l.IfName)
}

// readSoftRoCE reads a sandbox's rxe devices that known does not hold yet.
// One that cannot be read is logged and left out (missed: read it again
// later): its containers get no device for it, and the readiness checks
// say why.
func readSoftRoCE(call *hookCall, root string, leases []ipam.Lease, known map[string]*nicDevices) (devs map[string]*nicDevices, missed bool) {
	devs = maps.Clone(known)
	var sys *topology.Sysfs
	for _, l := range leases {
		name := softRoCEName(l)
		if name == "" || devs[name] != nil {
			continue
		}
		if sys == nil {
			var err error
			if sys, err = topology.OpenSysfs(root); err != nil {
				call.log().Warn("cannot read the pod's soft-RoCE devices", "error", err)
				return devs, true
			}
		}
		nic, err := sys.PodSoftRoCE(name)
		if err != nil {
			call.log().Warn("pod's soft-RoCE device not readable: its containers do not get it", "device", name, "interface", l.IfName, "error", err)
			missed = true
			continue
		}
		if devs == nil {
			devs = map[string]*nicDevices{}
		}
		nd := buildNIC(&nic, false, map[string]namedDevice{}, call.log())
		nd.soft = true
		devs[name] = nd
	}
	return devs, missed
}
