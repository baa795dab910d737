package raild

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// allocator is one way a CNI ADD or DEL reaches raild.
type allocator interface {
	add(ctx context.Context, sandbox string) (string, error)
	del(ctx context.Context, sandbox string) error
}

// clientAllocator calls raild through api.Client, as the rail plugin does.
type clientAllocator struct {
	c     *api.Client
	netns string
}

func (a clientAllocator) add(ctx context.Context, sandbox string) (string, error) {
	plan, err := a.c.Allocate(ctx, api.AllocateRequest{Sandbox: sandbox, Netns: a.netns, CNIIfName: "net1",
		Network: "n", Mode: api.ModeIPAM, Pool: "p", PodNamespace: "default", PodName: "pod-" + sandbox})
	if err != nil {
		return "", err
	}
	if len(plan.Interfaces) != 1 || len(plan.Interfaces[0].Addresses) != 1 {
		return "", fmt.Errorf("allocate %s: plan %+v, want one interface with one address", sandbox, plan)
	}
	return plan.Interfaces[0].Addresses[0].CIDR, nil
}

func (a clientAllocator) del(ctx context.Context, sandbox string) error {
	return a.c.Release(ctx, api.AttachmentRequest{Sandbox: sandbox, CNIIfName: "net1", Network: "n"})
}

// pluginAllocator execs a fresh rail-ipam process per call.
type pluginAllocator struct {
	p     ipamPlugin
	netns string
}

func (a pluginAllocator) add(ctx context.Context, sandbox string) (string, error) {
	return a.p.add(ctx, sandbox, a.netns)
}

func (a pluginAllocator) del(ctx context.Context, sandbox string) error {
	return a.p.del(ctx, sandbox, a.netns)
}

// record is what the clients saw of one sandbox's ADD and DEL.
type record struct {
	addr     string
	asked    time.Time // ADD sent
	added    time.Time // ADD answered with addr
	delAsked time.Time // DEL sent
	deleted  time.Time // DEL answered
}

// ledger records every call and its answer, with times, so any snapshot
// of raild's leases can be judged: a lease must be there from the answer
// of its ADD to the start of its DEL, with the address the ADD gave.
type ledger struct {
	mu   sync.Mutex
	recs map[string]*record
}

func newLedger() *ledger { return &ledger{recs: map[string]*record{}} }

// add runs one ADD through a and records it.
func (l *ledger) add(ctx context.Context, a allocator, sandbox string) error {
	l.mu.Lock()
	l.recs[sandbox] = &record{asked: time.Now()}
	l.mu.Unlock()
	addr, err := a.add(ctx, sandbox)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs[sandbox].addr, l.recs[sandbox].added = addr, time.Now()
	return nil
}

// del runs one DEL through a and records it.
func (l *ledger) del(ctx context.Context, a allocator, sandbox string) error {
	l.mu.Lock()
	l.recs[sandbox].delAsked = time.Now()
	l.mu.Unlock()
	if err := a.del(ctx, sandbox); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs[sandbox].deleted = time.Now()
	return nil
}

// judge checks a snapshot of the leases taken between from and to.
func (l *ledger) judge(leases []api.Lease, from, to time.Time) []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	holder := map[string]string{}
	listed := map[string]bool{}
	for _, lease := range leases {
		if other, dup := holder[lease.Address]; dup {
			errs = append(errs, fmt.Errorf("address %s leased to both %s and %s", lease.Address, other, lease.Sandbox))
		}
		holder[lease.Address], listed[lease.Sandbox] = lease.Sandbox, true
		rec, ok := l.recs[lease.Sandbox]
		switch {
		case !ok || rec.asked.After(to):
			errs = append(errs, fmt.Errorf("lease %s for %s that no client asked for", lease.Address, lease.Sandbox))
		case !rec.added.IsZero() && lease.Address != rec.addr:
			errs = append(errs, fmt.Errorf("%s holds %s but its ADD answered %s", lease.Sandbox, lease.Address, rec.addr))
		case !rec.deleted.IsZero() && rec.deleted.Before(from):
			errs = append(errs, fmt.Errorf("%s still holds %s after its DEL was answered", lease.Sandbox, lease.Address))
		}
	}
	for sandbox, rec := range l.recs {
		live := !rec.added.IsZero() && rec.added.Before(from) && (rec.delAsked.IsZero() || rec.delAsked.After(to))
		if live && !listed[sandbox] {
			errs = append(errs, fmt.Errorf("lost lease: %s was given %s and never released, but raild does not list it", sandbox, rec.addr))
		}
	}
	return errs
}
