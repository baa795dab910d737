package nri

import (
	"maps"
	"sync"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// softRoCEDevices holds, on a node in softRoCE mode, each pod's own
// Soft-RoCE devices (the rxe the plugin made on each of its interfaces),
// read from sysfs when the pod starts (RunPodSandbox, Synchronize) or, when
// a device was not there yet, at the next CreateContainer. A container of
// such a pod gets its pod's rxe (uverbs, rdma_cm, the env naming it), never
// the node's NIC the interface came from.
type softRoCEDevices struct {
	root string
	mu   sync.Mutex
	pods map[string]map[string]*nicDevices // by sandbox, then rxe name
}

func newSoftRoCEDevices(root string) *softRoCEDevices {
	return &softRoCEDevices{root: root, pods: map[string]map[string]*nicDevices{}}
}

// softRoCEName is the rxe of a lease's interface ("" for a lease without a NIC).
func softRoCEName(l ipam.Lease) string {
	if len(l.Holds()) == 0 {
		return ""
	}
	return rdma.SoftRoCEName(l.Sandbox, l.IfName)
}

// devices are a sandbox's rxe devices, read now for those not known yet
// (nil when the node is not in softRoCE mode). One that cannot be read is
// logged and left out: its container gets no device for it, and the
// readiness checks say why.
func (s *softRoCEDevices) devices(call *hookCall, leases []ipam.Lease) map[string]*nicDevices {
	if s == nil {
		return nil
	}
	sandbox := call.pod.GetId()
	s.mu.Lock()
	known := maps.Clone(s.pods[sandbox])
	s.mu.Unlock()
	var sys *topology.Sysfs
	for _, l := range leases {
		name := softRoCEName(l)
		if name == "" || known[name] != nil {
			continue
		}
		if sys == nil {
			var err error
			if sys, err = topology.OpenSysfs(s.root); err != nil {
				call.log().Warn("cannot read the pod's soft-RoCE devices", "error", err)
				return known
			}
		}
		nic, err := sys.PodSoftRoCE(name)
		if err != nil {
			call.log().Warn("pod's soft-RoCE device not readable: its containers do not get it", "device", name, "interface", l.IfName, "error", err)
			continue
		}
		if known == nil {
			known = map[string]*nicDevices{}
		}
		nd := buildNIC(&nic, false, map[string]namedDevice{}, call.log())
		nd.soft = true
		known[name] = nd
	}
	s.mu.Lock()
	s.pods[sandbox] = known
	s.mu.Unlock()
	return known
}

func (s *softRoCEDevices) forget(sandbox string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, sandbox)
}

func (s *softRoCEDevices) reset() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods = map[string]map[string]*nicDevices{}
}

// leaseNIC resolves a lease's NIC to what its containers get: on a
// softRoCE node the pod's rxe on the lease's interface, else the node's NIC.
func (c *hookCall) leaseNIC(l ipam.Lease, nic string) (*nicDevices, bool) {
	if c.p.soft != nil {
		nd, ok := c.soft[softRoCEName(l)]
		return nd, ok
	}
	nd, ok := c.node().devs.nics[nic]
	return nd, ok
}

// nic resolves a name containerNICs gave: a pod's rxe, else a node's NIC.
func (c *hookCall) nic(name string) (*nicDevices, bool) {
	if nd, ok := c.soft[name]; ok {
		return nd, true
	}
	nd, ok := c.node().devs.nics[name]
	return nd, ok
}
