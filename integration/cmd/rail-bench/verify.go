package main

import (
	"context"
	"errors"
	"fmt"
)

// verifyAttachments adds and deletes one pod on every side before anything
// is measured and requires the interfaces each side promises, each with an
// address: a rail that passed the pod through (no GPUs, no opt-in), or a
// plugin that silently did less, would otherwise be measured doing nothing.
func verifyAttachments(ctx context.Context, sides []side) error {
	for _, s := range sides {
		cs, ok := s.(*cniSide)
		if !ok || len(cs.ifaces) == 0 {
			continue
		}
		err := cs.add(ctx, 0)
		if err == nil {
			err = cs.hasInterfaces(0)
		}
		if err := errors.Join(err, cs.del(ctx, 0), cs.tidy(1)); err != nil {
			return fmt.Errorf("verify attachments: %w", err)
		}
	}
	return nil
}

// hasInterfaces checks the pod in slot for the side's interfaces.
func (s *cniSide) hasInterfaces(slot int) error {
	pod := s.pods[slot]
	name := s.networks(slot)[0].network.List.Name
	for _, ifName := range s.ifaces {
		link, found, err := pod.Link(ifName)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("network %s: pod %s has no %s after ADD (passed through? the pod's annotations: %v)",
				name, pod.Name, ifName, pod.Annotations)
		}
		if len(link.Addrs) == 0 {
			return fmt.Errorf("network %s: pod %s: %s has no address after ADD", name, pod.Name, ifName)
		}
	}
	return nil
}
