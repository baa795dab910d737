package serve

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// ignoreHangups takes SIGHUP off its default action, which would end raild
// at once, without its cleanup and with its socket left behind, and logs
// each one instead: raild reloads nothing on SIGHUP. Its config file and
// flags are read once at start, so a change takes a restart; what changes
// on the node (NICs, ports, pods) raild follows on its own.
func ignoreHangups(ctx context.Context, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Warn("SIGHUP ignored: raild does not reload its config or flags; restart it to apply a change", "component", "serve")
			}
		}
	}()
}
