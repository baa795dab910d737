package service

import (
	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// The adapters that give placement the NICs' use: the allocator's leases
// (leaseUse) and, for an allocation, the NICs DRA NIC drivers hold beside
// them (draUse).

// placementUse is what placement reads of the NICs' use: the leases, and
// the NICs DRA NIC drivers gave pods, each held as if moved (the driver
// moved its netdev, in exclusive RDMA netns mode its RDMA device too), so
// no mode ever takes one while its claim holds it.
func (s *Service) placementUse(use ipam.NICUse) placement.Use {
	return draUse{leases: leaseUse{use}, held: s.opt.DRAHeld}
}

type draUse struct {
	leases leaseUse
	held   *podinfo.DRAHeld
}

func (u draUse) Range(fn func(nic string, h placement.Holder)) {
	u.leases.Range(fn)
	u.held.Range(func(sandbox string, pod podinfo.PodDRANICs, nic podinfo.DRANIC) {
		fn(nic.NIC, placement.Holder{Sandbox: sandbox, Namespace: pod.Namespace, Name: pod.Name, Mode: api.ModeMove})
	})
}

// leaseUse is placement's view of the NICs' use: the allocator's index of
// the leases naming each NIC, those being written included.
type leaseUse struct{ use ipam.NICUse }

func (u leaseUse) Range(fn func(nic string, h placement.Holder)) {
	u.use.Range(func(nic string, l *ipam.Lease) {
		fn(nic, placement.Holder{Sandbox: l.Sandbox, Namespace: l.PodNamespace, Name: l.PodName, Mode: api.Mode(l.Mode), VF: l.VF})
	})
}
