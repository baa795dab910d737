package nri

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/containerd/nri/pkg/stub"
)

// Reconnection backoff: doubles from backoffMin to backoffMax and starts
// over once a connection has lasted stableAfter.
const (
	backoffMin  = 250 * time.Millisecond
	backoffMax  = 15 * time.Second
	stableAfter = 30 * time.Second
)

// Run registers the plugin with the runtime and serves its events until ctx
// is done, connecting again (with backoff) whenever the runtime goes away,
// e.g. when containerd restarts. It returns nil once ctx is done.
func (p *Plugin) Run(ctx context.Context) error {
	defer p.cancelAllReleases()
	wait := backoffMin
	for {
		started := time.Now()
		err := p.runOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(started) >= stableAfter {
			wait = backoffMin
		}
		p.log.Warn("NRI connection ended; connecting again", "socket", p.cfg.Socket, "in", wait, "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, backoffMax)
	}
}

// runOnce is one connection: register, serve, return when it closes.
func (p *Plugin) runOnce(ctx context.Context) error {
	s, err := stub.New(p,
		stub.WithPluginName(p.cfg.PluginName),
		stub.WithPluginIdx(p.cfg.PluginIndex),
		stub.WithSocketPath(p.cfg.Socket),
		stub.WithLogger(stubLogger{p.log}),
		stub.WithOnClose(func() { p.log.Info("NRI runtime closed the connection") }),
	)
	if err != nil {
		return fmt.Errorf("creating the NRI stub: %w", err)
	}
	err = s.Run(ctx)
	if err == nil {
		err = errors.New("connection closed")
	}
	return fmt.Errorf("NRI plugin %s-%s on %s: %w", p.cfg.PluginIndex, p.cfg.PluginName, p.cfg.Socket, err)
}

// stubLogger sends the NRI stub's own messages to slog.
type stubLogger struct{ log *slog.Logger }

func (l stubLogger) Debugf(ctx context.Context, format string, args ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, args...))
}

func (l stubLogger) Infof(ctx context.Context, format string, args ...any) {
	l.log.InfoContext(ctx, fmt.Sprintf(format, args...))
}

func (l stubLogger) Warnf(ctx context.Context, format string, args ...any) {
	l.log.WarnContext(ctx, fmt.Sprintf(format, args...))
}

func (l stubLogger) Errorf(ctx context.Context, format string, args ...any) {
	l.log.ErrorContext(ctx, fmt.Sprintf(format, args...))
}
