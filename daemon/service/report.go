package service

import (
	"errors"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// Reporter tells the cluster what raild did for a pod: Events, and the
// pod's network-status in chained mode. Its methods run on the ADD and DEL
// paths: they must return at once (queue the work, never wait on the API
// server) and must not modify what they are given.
type Reporter interface {
	// Attached: raild placed and leased the interfaces of one attachment.
	Attached(Attached)
	// Refused: raild refused an attachment for a reason the pod's owner can
	// fix (no NIC, pool exhausted, invalid pod configuration).
	Refused(Refused)
	// Released: a CNI DEL freed the interfaces of one attachment.
	Released(Released)
}

// PodRef names a pod as the runtime passed it (no API read).
type PodRef struct {
	Namespace string
	Name      string
	UID       string
}

// Attached is one attachment raild made.
type Attached struct {
	Pod     PodRef
	Sandbox string
	Netns   string
	Network string
	Mode    api.Mode
	// Chained: rail ran after a primary plugin, so nobody else writes
	// rail's interfaces into the pod's network-status (Multus does when rail
	// is a NetworkAttachmentDefinition).
	Chained    bool
	Interfaces []AttachedInterface
}

// AttachedInterface is one pod interface with the placement behind it.
type AttachedInterface struct {
	api.PlanInterface
	// Distances is the NIC's class to each of the pod's GPUs (empty when
	// the pod holds none or the interface has no NIC).
	Distances []GPUDistance
}

// GPUDistance is a NIC's distance class to one GPU, and whether that GPU
// chose the NIC (its closest usable one).
type GPUDistance struct {
	GPU   int
	Class string
	Chose bool
}

// Refused is an attachment raild refused.
type Refused struct {
	Pod     PodRef
	Sandbox string
	Network string
	Err     *api.Error
}

// Released is an attachment a CNI DEL freed.
type Released struct {
	Pod        PodRef
	Sandbox    string
	Network    string
	Interfaces []ReleasedInterface
}

// ReleasedInterface is a freed pod interface and the address it had (so a
// late DEL of an old sandbox cannot take back what a new one reported).
type ReleasedInterface struct {
	Name    string
	Address string // CIDR
}

func podRef(req api.AllocateRequest) PodRef {
	return PodRef{Namespace: req.PodNamespace, Name: req.PodName, UID: req.PodUID}
}

// reportAttached tells the reporter about a fresh attachment of a named pod.
func (s *Service) reportAttached(m *topology.Machine, req api.AllocateRequest, plan *api.Plan, gpus []int) {
	if s.opt.Reporter == nil || req.PodName == "" {
		return
	}
	a := Attached{Pod: podRef(req), Sandbox: req.Sandbox, Netns: req.Netns, Network: req.Network, Mode: req.Mode,
		Chained: req.Chained, Interfaces: make([]AttachedInterface, 0, len(plan.Interfaces))}
	for _, iface := range plan.Interfaces {
		a.Interfaces = append(a.Interfaces, AttachedInterface{PlanInterface: iface, Distances: gpuDistances(m, iface, gpus)})
	}
	s.opt.Reporter.Attached(a)
}

// gpuDistances is the class of the interface's NIC to each of the pod's GPUs.
func gpuDistances(m *topology.Machine, iface api.PlanInterface, gpus []int) []GPUDistance {
	if iface.NIC == nil || len(gpus) == 0 {
		return nil
	}
	nic, ok := m.NICByName(iface.NIC.RDMADevice)
	if !ok && iface.VF != nil {
		// a VF's distance is its PF's (one without an RDMA device of its own: igbvf)
		if pf, found := m.PFByPCI(iface.VF.PFPCI); found {
			nic, ok = m.PFNIC(pf)
		}
	}
	if !ok {
		return nil
	}
	out := make([]GPUDistance, 0, len(gpus))
	for _, idx := range gpus {
		for _, g := range m.GPUs {
			if g.Index == idx {
				out = append(out, GPUDistance{GPU: idx, Class: m.Distance(g, nic).String(), Chose: holds(iface.GPUs, idx)})
			}
		}
	}
	return out
}

func holds(gpus []int, idx int) bool {
	for _, g := range gpus {
		if g == idx {
			return true
		}
	}
	return false
}

// reportRefused tells the reporter about a refusal the pod's owner can fix;
// raild's own failures (store, kubelet) are for raild's log and metrics.
func (s *Service) reportRefused(req api.AllocateRequest, err error) {
	if s.opt.Reporter == nil || req.PodName == "" {
		return
	}
	var apiErr *api.Error
	if !errors.As(err, &apiErr) {
		return
	}
	switch apiErr.Code {
	case api.CodeNoNIC, api.CodePoolExhausted, api.CodeInvalidConfig:
		s.opt.Reporter.Refused(Refused{Pod: podRef(req), Sandbox: req.Sandbox, Network: req.Network, Err: apiErr})
	}
}

// reportReleased tells the reporter which interfaces of a pod a DEL freed.
func (s *Service) reportReleased(network string, released []ipam.Lease) {
	if s.opt.Reporter == nil || len(released) == 0 || released[0].PodName == "" {
		return
	}
	first := released[0]
	r := Released{Pod: PodRef{Namespace: first.PodNamespace, Name: first.PodName, UID: first.PodUID},
		Sandbox: first.Sandbox, Network: network}
	for _, l := range sortedLeases(released) {
		r.Interfaces = append(r.Interfaces, ReleasedInterface{Name: l.IfName, Address: l.Address.String()})
	}
	s.opt.Reporter.Released(r)
}
