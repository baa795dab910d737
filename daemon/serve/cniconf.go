package serve

import (
	"context"
	"log/slog"

	"github.com/railcni/rail/daemon/cniconf"
)

// startCNIWatcher keeps rail's entry in the primary's conflist while raild
// serves, when cni.mode is chained. The returned check is part of /readyz:
// nil once the entry is in place (always nil in nad mode).
func startCNIWatcher(ctx context.Context, cfg cniconf.Config, log *slog.Logger) func() error {
	if cfg.Mode != cniconf.ModeChained {
		return func() error { return nil }
	}
	w := cniconf.NewWatcher(cfg, cniconf.WatchOptions{}, log)
	log.Info("keeping rail's entry in the primary's CNI config", "dir", cfg.ConfDir, "entry", string(cfg.Entry))
	go func() { _ = w.Run(ctx) }()
	return w.Ready
}
