package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/vishvananda/netns"

	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/pkg/topology"
)

// rescanInterval is the periodic rescan beside link events (discovery
// takes 1-2 ms on the largest machine).
const rescanInterval = 30 * time.Second

// watchNode keeps the inventory current from host link events and a timer
// until ctx ends, handing each new machine to the readers that keep a
// copy (NRI's device table) and logging what changed.
func watchNode(ctx context.Context, inv *inventory.Inventory, log *slog.Logger, readers ...func(*topology.Machine)) {
	events, err := inventory.LinkEvents(ctx, netns.None())
	if err != nil {
		log.Warn("no link events: the node is rescanned on the timer only", "every", rescanInterval, "reason", err)
	}
	go inv.Run(ctx, inventory.Watch{
		Interval: rescanInterval,
		Events:   events,
		Settle:   100 * time.Millisecond,
		Published: func(s *inventory.Snapshot) {
			for _, use := range readers {
				use(s.Machine)
			}
			log.Debug("node rescanned", "version", s.Version, "cause", s.Cause, "nics", len(s.Machine.NICs), "inPod", s.InPod)
		},
		Failed: func(err error) { log.Warn("node rescan failed; the last snapshot stays", "reason", err) },
	})
}
