// Package attached is where the service's pod events go: one Fanout hands
// each Attached, Refused and Released to every reader as the service sent
// it, and Placements, one such reader, keeps what placement said about
// each attachment for the readiness checks and doctor.
package attached

import "github.com/railcni/rail/daemon/service"

// Fanout is the service's one Reporter: it hands every event to each
// reader in turn. Readers follow service.Reporter's rules (return at once,
// never change what they are given), so each sees the event as sent.
type Fanout []service.Reporter

var _ service.Reporter = Fanout(nil)

// Attached hands a fresh attachment to every reader.
func (f Fanout) Attached(a service.Attached) {
	for _, r := range f {
		r.Attached(a)
	}
}

// Refused hands a refused attachment to every reader.
func (f Fanout) Refused(r service.Refused) {
	for _, reader := range f {
		reader.Refused(r)
	}
}

// Released hands a released attachment to every reader.
func (f Fanout) Released(d service.Released) {
	for _, r := range f {
		r.Released(d)
	}
}
