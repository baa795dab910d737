package service

import (
	"fmt"
	"net"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// leaseVFMAC is the admin MAC a vf-mode lease gives its VF: the one the
// netconf or the runtime asked, else the lease's own.
func leaseVFMAC(sandbox, ifName, asked string) string {
	if asked != "" {
		return asked
	}
	return api.LeaseMAC(sandbox, ifName).String()
}

// checkVFMACs keeps two VFs from ever carrying one admin MAC: the MAC of
// each new vf lease (asked, or its own) must be no other vf lease's, and
// an asked one no VF's of the node that the new lease does not take (a VF
// another plugin or the admin set up). It runs under the allocator's lock
// with the leases about to be made, so two ADDs asking one MAC at once
// cannot both pass.
func (s *Service) checkVFMACs(req api.AllocateRequest, reqs []ipam.Request, use ipam.NICUse) error {
	if req.MAC != "" && len(reqs) > 1 {
		return s.countError("allocate", "mac_taken", &api.Error{Code: api.CodeInvalidConfig, Msg: `invalid field "mac"`,
			Details: fmt.Sprintf("mac %s names one MAC, but this attachment gets %d VFs and no two VFs may share a MAC: set \"maxNICs\": 1, or leave mac out (each VF then gets its lease's own)", req.MAC, len(reqs))})
	}
	taken := map[string]string{} // MAC -> pod holding it
	use.Range(func(_ string, l *ipam.Lease) {
		if api.Mode(l.Mode) == api.ModeVF {
			taken[leaseVFMAC(l.Sandbox, l.IfName, l.MAC)] = podName(l.PodNamespace, l.PodName, l.Sandbox)
		}
	})
	for _, r := range reqs {
		mac := leaseVFMAC(r.Sandbox, r.IfName, r.MAC)
		pod, clash := taken[mac]
		switch {
		case clash && r.MAC != "":
			return s.countError("allocate", "mac_taken", &api.Error{Code: api.CodeInvalidConfig, Msg: `invalid field "mac"`,
				Details: fmt.Sprintf("admin MAC %s is already the VF's of pod %s, and two VFs never share one: give each pod its own (runtimeConfig mac), or leave mac out (each VF then gets its lease's own)", mac, pod)})
		case clash:
			return s.countError("allocate", "mac_taken", &api.Error{Code: api.CodeTryAgainLater, Msg: "admin MAC taken",
				Details: fmt.Sprintf("the admin MAC of this lease, %s, is already the VF's of pod %s (two leases' MACs collide): a new sandbox gets another", mac, pod)})
		}
		taken[mac] = podName(req.PodNamespace, req.PodName, req.Sandbox)
	}
	if req.MAC == "" || s.opt.HostVFs == nil {
		return nil
	}
	return s.macOnNode(req, reqs)
}

// macOnNode refuses an asked admin MAC that a VF of the node carries now,
// but the VFs the new leases take (a free VF may still carry it from
// before).
func (s *Service) macOnNode(req api.AllocateRequest, reqs []ipam.Request) error {
	mine := map[string]bool{}
	for _, r := range reqs {
		mine[r.VF] = true
	}
	var err error
	s.sweep.AdminMACs(s.Machine(), nil, func(pf topology.PF, vf topology.VF, mac net.HardwareAddr) bool {
		if mac.String() != req.MAC || mine[vf.PCI] {
			return true
		}
		err = s.countError("allocate", "mac_taken", &api.Error{Code: api.CodeInvalidConfig, Msg: `invalid field "mac"`,
			Details: fmt.Sprintf("admin MAC %s is already VF %d of %s's (%s), and two VFs never share one: pick another mac, or leave mac out (each VF then gets its lease's own)",
				req.MAC, vf.Index, pf.Netdev, vf.PCI)})
		return false
	})
	return err
}
