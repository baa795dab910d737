package cniconf

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// WatchOptions tune a Watcher; zero values take the defaults.
type WatchOptions struct {
	// Debounce is the quiet time after the last event before a pass (200ms).
	Debounce time.Duration
	// MinBackoff and MaxBackoff bound the wait before retrying a failed pass
	// (500ms doubling up to 30s); any event in the conf dir retries at once.
	MinBackoff, MaxBackoff time.Duration
	// FightReverts removals of the entry within FightWindow stop the
	// watcher (3 within 1m).
	FightReverts int
	FightWindow  time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
}

func (o *WatchOptions) defaults() {
	setDuration(&o.Debounce, 200*time.Millisecond)
	setDuration(&o.MinBackoff, 500*time.Millisecond)
	setDuration(&o.MaxBackoff, 30*time.Second)
	setDuration(&o.FightWindow, time.Minute)
	if o.FightReverts <= 0 {
		o.FightReverts = 3
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

func setDuration(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// Watcher keeps rail's entry in the runtime's conflist while raild runs.
type Watcher struct {
	in    *Installer
	dir   string
	opt   WatchOptions
	log   *slog.Logger
	guard *guard

	mu      sync.Mutex
	state   State
	changed chan struct{}
}

// NewWatcher watches cfg.ConfDir for cfg.Entry; cfg must be Finish()ed.
func NewWatcher(cfg Config, opt WatchOptions, log *slog.Logger) *Watcher {
	return newWatcher(NewInstaller(cfg), opt, log)
}

func newWatcher(in *Installer, opt WatchOptions, log *slog.Logger) *Watcher {
	opt.defaults()
	return &Watcher{
		in: in, dir: in.dir, opt: opt, log: log,
		guard:   newGuard(opt.FightReverts, opt.FightWindow, opt.Now),
		state:   State{Phase: PhaseStarting},
		changed: make(chan struct{}),
	}
}

// Run keeps the entry in place until ctx ends, or until the watcher stops
// for good (a fight, or an uninstall); the reason stays in State.
func (w *Watcher) Run(ctx context.Context) error {
	var dw dirWatch
	defer dw.close()
	timer := time.NewTimer(0)
	defer timer.Stop()
	backoff := w.opt.MinBackoff
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-dw.events():
			if dw.relevant(ev, ok, w.dir) {
				timer.Reset(w.opt.Debounce)
			}
		case err := <-dw.errors():
			w.log.Warn("conf dir watch", "dir", w.dir, "error", err)
			timer.Reset(w.opt.Debounce)
		case <-timer.C:
			err := w.pass(&dw)
			if stops(err) {
				return nil
			}
			backoff = w.nextBackoff(err, backoff)
			if err != nil {
				timer.Reset(backoff)
			}
		}
	}
}

// pass watches the conf dir (or, until it exists, its parent), then
// reconciles. With no conf dir or no config left, the next primary file is
// a fresh start, not a revert.
func (w *Watcher) pass(dw *dirWatch) error {
	var err error
	if !dw.onDir {
		dw.close()
		if err = dw.watch(w.dir); err != nil {
			w.report(Result{}, err)
		}
	}
	if err == nil {
		err = w.reconcile()
	}
	if errors.Is(err, ErrNoConfDir) || errors.Is(err, ErrNoPrimary) {
		w.guard.forget()
	}
	return err
}

func (w *Watcher) nextBackoff(err error, cur time.Duration) time.Duration {
	if err == nil {
		return w.opt.MinBackoff
	}
	return min(2*cur, w.opt.MaxBackoff)
}

// reconcile is one pass: the entry is put in place if it is missing.
// Its own writes cause a pass too, which finds the entry and writes nothing.
func (w *Watcher) reconcile() error {
	res, err := w.in.Install(w.guard.allow)
	if err == nil {
		w.guard.inPlace(res.Status)
	}
	if res.Changed {
		w.log.Info("inserted rail's entry into the primary's CNI config", "file", res.File, "primary", res.Target,
			"was", entryStateName(res.Entry))
	}
	w.report(res, err)
	return err
}

func entryStateName(s EntryState) string {
	switch s {
	case EntryMissing:
		return "missing"
	case EntryStale:
		return "different"
	}
	return "in place"
}
