package service

import (
	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// placeVFs is place for vf mode: the VFs placement chooses, named and
// pooled as their PFs' NICs would be, one lease each holding the VF's PCI
// address. Like place, it runs under the allocator's lock, so no two ADDs
// ever hold one VF. Requests reach it only once vf mode is served (see
// api.Mode.NotYetSupported): until the attach sequence exists raild
// refuses vf at validation.
func (s *Service) placeVFs(req api.AllocateRequest, pool string, input placement.Input, use placement.Use) ([]placement.Pick, []ipam.Request, error) {
	vfs, err := s.node().ChooseVFs(input, use)
	if err != nil {
		return nil, nil, noNICError{err}
	}
	picks := make([]placement.Pick, len(vfs))
	for i, v := range vfs {
		picks[i] = placement.Pick{NIC: v.PF, GPUs: v.GPUs, Class: v.Class, Reason: v.Reason}
	}
	picks, names, err := s.interfaceNames(req, picks)
	if err != nil {
		return nil, nil, err
	}
	held := make([]string, len(picks))
	for i := range picks {
		held[i] = vfs[i].VF.PCI
	}
	reqs, err := s.leaseRequests(req, pool, picks, names, held)
	return picks, reqs, err
}
