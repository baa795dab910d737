package serve

import (
	"context"
	"log/slog"
	"time"

	"github.com/railcni/rail/daemon/service"
)

// reconcileEvery is how often raild frees the leases of sandboxes whose
// netns is gone, for runtimes that never send CNI GC.
const reconcileEvery = time.Minute

// reconcileLoop runs the service's reconcile on a timer until ctx ends.
func reconcileLoop(ctx context.Context, svc *service.Service, log *slog.Logger) {
	tick := time.NewTicker(reconcileEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := svc.Reconcile(); err != nil {
				log.Warn("reconcile failed", "error", err)
			}
		}
	}
}
