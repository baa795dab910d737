package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/railcni/rail/integration/harness"
)

// side is one way of giving a pod its interface(s), measured on its own:
// rail, its upstream counterpart or a floor. ADD and DEL act on the pod
// in slot (bursts use many slots at once).
type side interface {
	add(ctx context.Context, slot int) error
	del(ctx context.Context, slot int) error
	// capacity is how many slots can hold an attachment at once.
	capacity() int
	// tidy puts back, untimed, what the side's plugins change on purpose
	// in slots 0..n-1 once deleted, so the next side starts from the same
	// node and the leak check holds every side to it.
	tidy(n int) error
}

// attachment is one network a runtime adds for a pod, with the interface
// name it asks for.
type attachment struct {
	network *harness.Network
	ifName  string
}

// cniSide runs networks through libcni on the bench's pods. ADD gives the
// pod a fresh sandbox ID and adds the networks in order; DEL deletes them
// in reverse order, as a runtime (or Multus) does.
type cniSide struct {
	pods     []*harness.Pod
	networks func(slot int) []attachment
	ids      *idSource
	restore  func(slot int) error // nil: nothing to put back
	// ifaces are the pod interfaces an ADD must give, each with an address.
	ifaces []string
}

func (s *cniSide) capacity() int { return len(s.pods) }

func (s *cniSide) tidy(n int) error {
	if s.restore == nil {
		return nil
	}
	for slot := range n {
		if err := s.restore(slot); err != nil {
			return err
		}
	}
	return nil
}

func (s *cniSide) add(ctx context.Context, slot int) error {
	pod := s.pods[slot]
	pod.Sandbox = s.ids.next()
	for _, a := range s.networks(slot) {
		if _, err := a.network.Add(ctx, withIfName(pod, a.ifName)); err != nil {
			return fmt.Errorf("ADD %s (%s) for pod %s: %w", a.network.List.Name, a.ifName, pod.Name, err)
		}
	}
	return nil
}

func (s *cniSide) del(ctx context.Context, slot int) error {
	pod := s.pods[slot]
	nets := s.networks(slot)
	for i := len(nets) - 1; i >= 0; i-- {
		a := nets[i]
		if err := a.network.Del(ctx, withIfName(pod, a.ifName)); err != nil {
			return fmt.Errorf("DEL %s (%s) for pod %s: %w", a.network.List.Name, a.ifName, pod.Name, err)
		}
	}
	return nil
}

// withIfName is the pod as the runtime presents it to one network.
func withIfName(pod *harness.Pod, ifName string) *harness.Pod {
	p := *pod
	p.IfName = ifName
	return &p
}

// idSource hands out sandbox IDs unique within the run.
type idSource struct {
	run string
	n   atomic.Int64
}

func (s *idSource) next() string { return fmt.Sprintf("%s%08d", s.run, s.n.Add(1)) }
