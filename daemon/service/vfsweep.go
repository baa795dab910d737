package service

import (
	"fmt"
	"net"
	"slices"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/topology"
)

// HostVFs is the host side of vf mode raild needs to never leak a VF
// (attach.HostVFs on a node; a fake in tests).
type HostVFs interface {
	// ResetReturned resets the VFs the kernel handed back from dead pods
	// (still labelled by rail), but those skip names.
	ResetReturned(skip func(pf string, index int) bool) ([]attach.ReturnedVF, error)
	// AdminMACs reads the admin MAC of each VF of a PF, by index.
	AdminMACs(pf string) (map[int]net.HardwareAddr, error)
	// ResetUnowned gives a VF a clean state through its PF (no admin MAC,
	// no VLAN, spoofchk on, trust off, ...) and returns what it found.
	ResetUnowned(pf string, index int) (attach.VFState, error)
}

// vfPlace is a VF as the sweep names it: by its PF's netdev and index.
type vfPlace struct {
	pf    string
	index int
}

// sweepVFs runs with every reconcile (start, CNI GC, the timer), after the
// leases of dead pods are released: it resets each VF that came back from
// a pod netns that died without DEL and that no lease holds; on the PFs
// raild owns (sriov.ownPFs) it resets each VF in the host that carries an
// admin MAC no lease holds; then it reports the VFs whose admin MAC is
// one rail gives (api.LeaseMAC) while no lease holds them, and VFs that
// share an admin MAC.
func (s *Service) sweepVFs() error {
	if s.opt.HostVFs == nil {
		return nil
	}
	m := s.Machine()
	byPlace := map[vfPlace]topology.VF{}
	for _, pf := range m.PFs {
		for _, vf := range pf.VFs {
			if pf.Netdev != "" {
				byPlace[vfPlace{pf.Netdev, vf.Index}] = vf
			}
		}
	}
	var returned []attach.ReturnedVF
	var resetErr error
	var holders map[string]string
	// Under the allocator's lock: an ADD that takes one of these VFs gets
	// its lease before or after the reset, never during it.
	s.alloc.ReadNICs(func(use ipam.NICUse) {
		holders = heldVFs(use)
		returned, resetErr = s.opt.HostVFs.ResetReturned(func(pf string, index int) bool {
			vf, known := byPlace[vfPlace{pf, index}]
			if !known {
				return false // a VF the node no longer lists cannot be held
			}
			_, held := vf.HeldBy(holders)
			return held
		})
	})
	reset := 0
	failed := map[vfPlace]bool{}
	for _, r := range returned {
		attrs := []any{"pf", r.PF, "vf", r.Index, "netdev", r.Netdev, "host", r.Host, "sandbox", r.Owner.Sandbox}
		if r.Err != nil {
			failed[vfPlace{r.PF, r.Index}] = true
			s.log.Warn("VF back from a pod that is gone could not be reset; it stays out of placement until it is", append(attrs, "error", r.Err)...)
			continue
		}
		reset++
		s.countVFReset(r.PF, vfResetReturned)
		s.log.Info("VF back from a pod that is gone reset to its settings from before the pod", attrs...)
	}
	if reset > 0 && s.opt.Rescan != nil {
		// Their netdevs have their host names again: plans must name those
		// (at start the link events that say so may come before raild
		// follows them).
		s.opt.Rescan("VFs reset after their pods were gone")
		m = s.Machine()
	}
	holders = s.resetUnowned(m, holders, failed)
	s.setLeakedVFs(s.findLeakedVFs(m, holders))
	if resetErr != nil {
		return fmt.Errorf("reset VFs back from dead pods: %w", resetErr)
	}
	return nil
}

// heldVFs names the pods holding each NIC or VF PCI address a lease names.
func heldVFs(use ipam.NICUse) map[string]string {
	holders := map[string]string{}
	use.Range(func(nic string, l *ipam.Lease) {
		holders[topology.NormalizePCI(nic)] = podName(l.PodNamespace, l.PodName, l.Sandbox)
		holders[nic] = podName(l.PodNamespace, l.PodName, l.Sandbox)
	})
	return holders
}

// findLeakedVFs reads each PF's VFs' admin MACs.
func (s *Service) findLeakedVFs(m *topology.Machine, holders map[string]string) []topology.LeakedVF {
	var out []topology.LeakedVF
	seen := map[string]topology.LeakedVF{} // admin MAC -> first VF carrying it
	s.vfAdminMACs(m, nil, func(pf topology.PF, vf topology.VF, mac net.HardwareAddr) bool {
		v := topology.LeakedVF{PCI: vf.PCI, PF: pf.Netdev, Index: vf.Index, MAC: mac.String()}
		if first, twice := seen[v.MAC]; twice {
			v.Why = fmt.Sprintf("admin MAC %s is also VF %d of %s's (%s)", v.MAC, first.Index, first.PF, first.PCI)
			out = append(out, v)
		} else {
			seen[v.MAC] = v
		}
		if _, held := vf.HeldBy(holders); !held && api.IsLeaseMAC(mac) {
			v.Why = fmt.Sprintf("admin MAC %s is one rail gives a lease, but no lease holds the VF", v.MAC)
			out = append(out, v)
		}
		return true
	})
	return out
}

// vfAdminMACs calls fn with each VF that carries an admin MAC, on the
// PFs with a netdev that only selects (nil: all), as their PFs report
// them; fn returning false stops. A PF whose VFs cannot be read is logged
// and passed over.
func (s *Service) vfAdminMACs(m *topology.Machine, only func(topology.PF) bool, fn func(topology.PF, topology.VF, net.HardwareAddr) bool) {
	for _, pf := range m.PFs {
		if pf.Netdev == "" || len(pf.VFs) == 0 || (only != nil && !only(pf)) {
			continue
		}
		macs, err := s.opt.HostVFs.AdminMACs(pf.Netdev)
		if err != nil {
			s.log.Warn("cannot read the VFs' admin MACs", "pf", pf.Netdev, "error", err)
			continue
		}
		for _, vf := range pf.VFs {
			if mac := macs[vf.Index]; len(mac) > 0 && !isZeroMAC(mac) && !fn(pf, vf, mac) {
				return
			}
		}
	}
}

func isZeroMAC(mac net.HardwareAddr) bool {
	return !slices.ContainsFunc(mac, func(b byte) bool { return b != 0 })
}

// setLeakedVFs keeps the sweep's finding for metrics, raild topo and
// doctor, and logs each VF found leaked that was not before.
func (s *Service) setLeakedVFs(leaked []topology.LeakedVF) {
	s.mu.Lock()
	before := s.leakedVFs
	s.leakedVFs = leaked
	s.mu.Unlock()
	for _, v := range leaked {
		if !slices.Contains(before, v) {
			s.log.Warn("VF carries a pod's admin MAC that no lease owns", "pci", v.PCI, "pf", v.PF, "vf", v.Index, "mac", v.MAC, "why", v.Why)
		}
	}
}

// LeakedVFs is what the last sweep found (see sweepVFs).
func (s *Service) LeakedVFs() []topology.LeakedVF {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.leakedVFs)
}
