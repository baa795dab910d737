package inventory

import "context"

// Chan is a LinkSource of the events a test sends on a channel; it ends
// when the channel closes.
type Chan <-chan LinkEvent

// Run hands on every event received until the channel closes or ctx ends.
func (c Chan) Run(ctx context.Context, handle func(LinkEvent)) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-c:
			if !ok {
				return
			}
			handle(ev)
		}
	}
}
