package attached

import (
	"slices"
	"sync"
	"time"

	"github.com/railcni/rail/daemon/readiness"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/pkg/api"
)

// Grace is how long a sandbox's placement is kept without a lease (an
// Attached event comes right after its lease is written; a sandbox whose
// leases went without a DEL, released by GC, is forgotten after it).
const Grace = time.Minute

// Placements remembers what placement said about each attachment (the
// service reports it once, at ADD): a reader of the Fanout.
type Placements struct {
	mu        sync.Mutex
	bySandbox map[string]service.Attached // the sandbox's attachments, merged
	at        map[string]time.Time        // when each sandbox was last attached
	now       func() time.Time
}

// NewPlacements remembers nothing yet; now is the clock (nil: time.Now).
func NewPlacements(now func() time.Time) *Placements {
	if now == nil {
		now = time.Now
	}
	return &Placements{bySandbox: map[string]service.Attached{}, at: map[string]time.Time{}, now: now}
}

var _ service.Reporter = (*Placements)(nil)

// Attached keeps the attachment's interfaces beside the sandbox's others.
func (p *Placements) Attached(a service.Attached) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.bySandbox[a.Sandbox]; ok {
		a.Interfaces = append(keepOthers(prev.Interfaces, a.Interfaces), a.Interfaces...)
	}
	p.bySandbox[a.Sandbox] = a
	p.at[a.Sandbox] = p.now()
}

// Refused changes nothing placement said.
func (p *Placements) Refused(service.Refused) {}

// Released forgets the released interfaces (and the sandbox with its last).
func (p *Placements) Released(d service.Released) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.bySandbox[d.Sandbox]
	if !ok {
		return
	}
	var gone []service.AttachedInterface
	for _, i := range d.Interfaces {
		gone = append(gone, service.AttachedInterface{PlanInterface: api.PlanInterface{Name: i.Name}})
	}
	a.Interfaces = keepOthers(a.Interfaces, gone)
	if len(a.Interfaces) == 0 {
		delete(p.bySandbox, d.Sandbox)
		delete(p.at, d.Sandbox)
		return
	}
	p.bySandbox[d.Sandbox] = a
}

// ForgetUnleased drops the placements of sandboxes that hold no lease,
// once they are older than Grace.
func (p *Placements) ForgetUnleased(leased map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for sandbox, at := range p.at {
		if !leased[sandbox] && p.now().Sub(at) > Grace {
			delete(p.bySandbox, sandbox)
			delete(p.at, sandbox)
		}
	}
}

// keepOthers drops from list the interfaces named in drop.
func keepOthers(list, drop []service.AttachedInterface) []service.AttachedInterface {
	var out []service.AttachedInterface
	for _, i := range list {
		named := false
		for _, d := range drop {
			named = named || d.Name == i.Name
		}
		if !named {
			out = append(out, i)
		}
	}
	return out
}

// Of is why placement chose an interface's NIC (empty when raild
// restarted since the ADD, or the sandbox was forgotten).
func (p *Placements) Of(sandbox, ifname string) readiness.Placement {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.bySandbox[sandbox]
	for _, i := range a.Interfaces {
		if i.Name != ifname {
			continue
		}
		pl := readiness.Placement{Network: a.Network, NIC: i.NIC, Distance: i.Distance, Reason: i.Reason}
		for _, d := range i.Distances {
			pl.Distances = append(pl.Distances, api.GPUDistance{GPU: d.GPU, Class: d.Class, Chose: d.Chose})
		}
		return pl
	}
	return readiness.Placement{}
}

// GPUs are the GPU indices placement saw for a sandbox, each once.
func (p *Placements) GPUs(sandbox string) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var indices []int
	for _, i := range p.bySandbox[sandbox].Interfaces {
		for _, d := range i.Distances {
			if !slices.Contains(indices, d.GPU) {
				indices = append(indices, d.GPU)
			}
		}
	}
	return indices
}
