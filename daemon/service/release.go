package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// Release frees every lease of an attachment. An unknown attachment is not
// an error (DEL is idempotent), and only this sandbox's leases are touched.
func (s *Service) Release(_ context.Context, req api.AttachmentRequest) error {
	if err := ValidateAttachment(req); err != nil {
		return err
	}
	done := s.enter(attachKey(req.Sandbox, req.CNIIfName, req.Network))
	defer done()
	s.forgetDRANICs(req.Sandbox)
	released, err := s.alloc.Release(req.Sandbox, req.CNIIfName, req.Network)
	if err != nil {
		return s.countError("release", "store", &api.Error{Code: api.CodeIO, Msg: "release leases", Details: err.Error()})
	}
	s.logReleased(released, "released by CNI DEL")
	s.readReturned(released)
	s.reportReleased(req.Network, released)
	return nil
}

// readReturned has the inventory read again what released leases gave
// back to the host: the VFs of vf leases, the NICs of move leases (the
// plugin's DEL put them back before it released them). The reads (sysfs,
// then a snapshot published) run after Release has answered, so a DEL
// does not wait for them; an allocation waits for the reads in flight
// (awaitReturns) and so finds them free.
func (s *Service) readReturned(released []ipam.Lease) {
	m := s.Machine()
	vfs := map[string][]string{}
	var devices []string
	for _, l := range released {
		switch {
		case l.VF != "":
			if vf, ok := m.VFByPCI(l.VF); ok {
				vfs[vf.PF] = append(vfs[vf.PF], vf.PCI)
			}
		case api.Mode(l.Mode) == api.ModeMove && len(l.NICs) > 0:
			if nic, ok := m.NICByName(l.NICs[0]); ok && nic.RDMADevice() != "" && !slices.Contains(devices, nic.RDMADevice()) {
				devices = append(devices, nic.RDMADevice())
			}
		}
	}
	if len(vfs) > 0 && s.opt.ReadVFs != nil {
		s.returns.RLock()
		go func() {
			defer s.returns.RUnlock()
			s.opt.ReadVFs("VF back from its pod (CNI DEL)", vfs)
		}()
	}
	if len(devices) > 0 && s.opt.ReadNICsBack != nil {
		s.returns.RLock()
		go func() {
			defer s.returns.RUnlock()
			s.opt.ReadNICsBack("NIC back from its pod (CNI DEL)", devices)
		}()
	}
}

// awaitReturns returns once the reads of released VFs and NICs started
// before it are done.
func (s *Service) awaitReturns() {
	s.returns.Lock()
	defer s.returns.Unlock()
}

// GC releases the network's leases that the runtime no longer lists.
func (s *Service) GC(_ context.Context, req api.GCRequest) (*api.GCResult, error) {
	if req.Network == "" {
		return nil, &api.Error{Code: api.CodeInvalidConfig, Msg: "invalid field \"network\"", Details: "gc needs the network name"}
	}
	valid := make([]ipam.Key, 0, len(req.Valid))
	for _, a := range req.Valid {
		valid = append(valid, ipam.Key{Sandbox: a.Sandbox, IfName: a.CNIIfName})
	}
	released, err := s.alloc.GC(req.Network, valid)
	if err != nil {
		return nil, s.countError("gc", "store", &api.Error{Code: api.CodeIO, Msg: "gc leases", Details: err.Error()})
	}
	s.logReleased(released, "not in the runtime's valid attachments (CNI GC)")
	gone, err := s.reconcile()
	if err != nil {
		return nil, s.countError("gc", "store", &api.Error{Code: api.CodeIO, Msg: "gc leases", Details: err.Error()})
	}
	released = append(released, gone...)
	res := &api.GCResult{Released: []api.Lease{}}
	for _, l := range released {
		res.Released = append(res.Released, toAPILease(l))
	}
	return res, nil
}

// ReleaseSandbox is the second signal (NRI StopPodSandbox/RemovePodSandbox)
// for a pod whose DEL never came. A NIC moved into the pod is released only
// once its netns is gone: until then it is still inside the pod and handing
// it to another pod would fail that pod's ADD.
func (s *Service) ReleaseSandbox(_ context.Context, sandbox string) error {
	released, err := s.alloc.ReleaseIf(func(l ipam.Lease) bool {
		if l.Sandbox != sandbox {
			return false
		}
		return !api.Mode(l.Mode).Exclusive() || l.Netns == "" || !s.opt.NetnsExists(l.Netns)
	})
	if err != nil {
		return fmt.Errorf("release sandbox %s: %w", sandbox, err)
	}
	s.logReleased(released, "pod sandbox stopped")
	return nil
}
