package service

import (
	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/daemon/sriov"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// placeVFs is place for vf mode: the VFs placement chooses, named and
// pooled as their PFs' NICs would be, one lease each holding its PF's
// port (NICs) and the VF's PCI address (VF). Like place, it runs under the allocator's lock, so no two ADDs
// ever hold one VF.
func (s *Service) placeVFs(v *view, req api.AllocateRequest, pool string, input placement.Input, use placement.Use) ([]placement.Pick, []ipam.Request, error) {
	vfs, err := v.node.ChooseVFs(input, use)
	if err != nil {
		return nil, nil, noNICError{err}
	}
	picks := make([]placement.Pick, len(vfs))
	for i, v := range vfs {
		picks[i] = placement.Pick{NIC: v.PF, GPUs: v.GPUs, Class: v.Class, Reason: v.Reason}
	}
	picks, names, err := s.interfaceNames(v.node, req, picks)
	if err != nil {
		return nil, nil, err
	}
	reqs, err := s.leaseRequests(v, req, pool, picks, names)
	if err != nil {
		return nil, nil, err
	}
	for i := range reqs {
		reqs[i].VF = vfs[i].VF.PCI
	}
	return picks, reqs, nil
}

// vfInfo describes the VF a vf-mode lease holds (its VF field): the
// NIC of the pod interface is the VF itself (its netdev, its own RDMA
// device when it has one, its PF's link layer), and the VF's place on its
// PF with the lease's admin MAC and, on an InfiniBand PF, its GUID. A VF
// the node no longer has is named by its PCI address alone (a DEL then
// finds it by the alias rail left).
func (s *Service) vfInfo(v *view, l ipam.Lease) (*api.NIC, *api.VF) {
	m := v.node.Machine
	vf := &api.VF{PCI: l.VF, MAC: leaseVFMAC(l.Sandbox, l.IfName, l.MAC), PoolConfig: s.poolVF(v, l.Pool)}
	nic := &api.NIC{PCI: l.VF}
	found, ok := m.VFByPCI(l.VF)
	if !ok {
		return nic, vf
	}
	vf.PCI, vf.Index, vf.PFPCI, vf.Netdev, vf.Driver, vf.RDMADevice = found.PCI, found.Index, found.PF, found.Netdev, found.Driver, found.RDMA
	nic.PCI, nic.Netdev, nic.RDMADevice = found.PCI, found.Netdev, found.RDMA
	if pf, ok := m.PFByPCI(found.PF); ok {
		vf.PF = pf.Netdev
		if pfNIC, ok := m.PFNIC(pf); ok {
			nic.LinkLayer = pfNIC.LinkLayer
			if nic.LinkLayer == topology.InfiniBand {
				vf.GUID = api.LeaseGUID(l.Sandbox, l.IfName).String()
			}
		}
	}
	if found.RDMA != "" {
		if own, ok := m.NICByName(found.RDMA); ok {
			nic.UverbsName, nic.Port = own.UverbsName, own.PortNum()
		}
	}
	return nic, vf
}

// poolVF is the VF settings of a pool (nil: none, or no such pool), which
// the plugin applies under the netconf's own keys. raild checked them when
// it loaded the pool (config or RailPool), so an error here is a bug.
func (s *Service) poolVF(v *view, pool string) *api.VFConfig {
	p, ok := v.get(pool)
	if !ok {
		return nil
	}
	cfg, err := sriov.PoolVF(p.Config)
	if err != nil {
		s.log.Error("pool's VF settings left out of the plan", "pool", pool, "error", err)
		return nil
	}
	return cfg
}

// vfPerGPU is the attachment's vfPerGPU: the netconf's, else the explicit
// pool's, else false (GPUs that share a PF share a VF).
func (s *Service) vfPerGPU(req api.AllocateRequest, v *view, pool string) bool {
	if req.VFPerGPU != nil {
		return *req.VFPerGPU
	}
	if p, ok := v.get(pool); ok && pool != "" && p.Config.VFPerGPU != nil {
		return *p.Config.VFPerGPU
	}
	return false
}

// vfSweep is vf mode's sweep on the service's leases (see sriov.Sweep).
func (s *Service) vfSweep() *sriov.Sweep {
	w := &sriov.Sweep{Host: s.opt.HostVFs, OwnPFs: s.opt.OwnPFs, Machine: s.Machine, Rescan: s.opt.Rescan, Log: s.log,
		Holding: func(fn func(map[string]string)) {
			s.alloc.ReadNICs(func(use ipam.NICUse) { fn(heldVFs(use)) })
		}}
	if s.opt.Metrics != nil {
		w.Count = func(pf, why string) { s.opt.Metrics.VFResets.WithLabelValues(pf, why).Inc() }
	}
	return w
}

// heldVFs names the pods holding each VF (by its PCI address) and each
// NIC a lease names (a VF's RDMA device leased in another mode): the
// holders topology.VF.HeldBy reads.
func heldVFs(use ipam.NICUse) map[string]string {
	holders := map[string]string{}
	use.Range(func(nic string, l *ipam.Lease) {
		if l.VF != "" {
			holders[topology.NormalizePCI(l.VF)] = podName(l.PodNamespace, l.PodName, l.Sandbox)
			return
		}
		holders[nic] = podName(l.PodNamespace, l.PodName, l.Sandbox)
	})
	return holders
}

// LeakedVFs is what the last VF sweep found (see sriov.Sweep.Run).
func (s *Service) LeakedVFs() []topology.LeakedVF {
	if s.sweep == nil {
		return nil
	}
	return s.sweep.Leaked()
}
