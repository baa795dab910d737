package attach

import (
	"errors"
	"fmt"

	"github.com/railcni/rail/pkg/rdma"
)

// SoftRoCEOps creates, finds and deletes Soft-RoCE devices (rxe) in a pod's
// netns, by its path. The default is RDMA netlink (pkg/rdma); tests, on a
// kernel without RDMA, model it.
type SoftRoCEOps struct {
	Add    func(podNetns, name, netdev string) error
	Has    func(podNetns, name string) (bool, error)
	Delete func(podNetns, name string) error
}

func rdmaSoftRoCE() SoftRoCEOps {
	return SoftRoCEOps{Add: rdma.AddSoftRoCE, Has: rdma.InNetns, Delete: rdma.DeleteSoftRoCE}
}

// ensureSoftRoCE gives the pod interface s.Name the rxe s.SoftRoCE, once
// the interface is in the pod with its addresses (the kernel then lists
// the address as the rxe's RoCE v2 GID). A repeated ADD finds it made.
func (a attacher) ensureSoftRoCE(sess *session, s Spec) error {
	if s.SoftRoCE == "" {
		return nil
	}
	found, err := a.soft.Has(sess.podPath, s.SoftRoCE)
	if err != nil {
		return fmt.Errorf("soft-RoCE device %s: %w", s.SoftRoCE, err)
	}
	if found {
		return nil
	}
	return a.soft.Add(sess.podPath, s.SoftRoCE, s.Name)
}

// removeSoftRoCE deletes the rxe of s before its interface goes. Deleting
// or moving the interface would take the rxe with it too (the kernel
// unregisters an rxe whose netdev leaves its netns), but only later, from a
// work queue: deleting it first makes DEL leave nothing behind when it
// returns. A pod netns that is gone took it already.
func (a attacher) removeSoftRoCE(sess *session, s Spec) error {
	if s.SoftRoCE == "" || sess.pod == nil {
		return nil
	}
	if err := a.soft.Delete(sess.podPath, s.SoftRoCE); err != nil {
		return fmt.Errorf("soft-RoCE device %s: %w", s.SoftRoCE, err)
	}
	return nil
}

// withSoftRoCE completes an interface attachOne made or found with its
// rxe; when that fails, an interface this call made is undone.
func (a attacher) withSoftRoCE(sess *session, s Spec, got Attached) (Attached, error) {
	err := a.ensureSoftRoCE(sess, s)
	if err == nil {
		return got, nil
	}
	err = fmt.Errorf("attach %s (%s of %s): %w", s.Name, s.Mode, s.Parent, err)
	if got.Created {
		if undo := a.detachIn(sess, s); undo != nil {
			err = errors.Join(err, fmt.Errorf("undo: %w", undo))
		}
	}
	return Attached{}, err
}
