package serve

import (
	"log/slog"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/recovery"
	"github.com/railcni/rail/ipam"
)

// checkLostStore refuses to start on a lease store that was removed while
// pods hold its addresses (recovery.CheckLostStore); the pod netns it
// could not look into are logged once.
func checkLostStore(cfg *config.Config, pools *ipam.Pools, log *slog.Logger) error {
	problems, err := recovery.CheckLostStore(cfg, pools)
	if err == nil && len(problems) > 0 {
		log.Warn("no lease store, and some pod netns could not be checked for rail's interfaces: starting with an empty store",
			"netnsDir", cfg.NetnsDir, "unreadable", len(problems), "first", problems[0])
	}
	return err
}
