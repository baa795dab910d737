package cniconf

import (
	"context"
	"errors"
	"fmt"
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
	// FightReverts reverts within FightWindow, each seen within FightAfter
	// of rail's write, are a fight (3 within 1m, each within 5s).
	FightReverts int
	FightWindow  time.Duration
	FightAfter   time.Duration
	// FightPause is how long the conf dir must stay unchanged before the
	// watcher tries again after a fight (1m); it doubles, up to
	// MaxFightPause (30m), when the next fight follows within FightWindow.
	FightPause, MaxFightPause time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
}

func (o *WatchOptions) defaults() {
	setDuration(&o.Debounce, 200*time.Millisecond)
	setDuration(&o.MinBackoff, 500*time.Millisecond)
	setDuration(&o.MaxBackoff, 30*time.Second)
	setDuration(&o.FightWindow, time.Minute)
	setDuration(&o.FightAfter, 5*time.Second)
	setDuration(&o.FightPause, time.Minute)
	setDuration(&o.MaxFightPause, 30*time.Minute)
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

	// Run's own: whether the conf dir was prepared (begin), the current
	// pause after a fight, and when the last pause ended.
	begun   bool
	pause   time.Duration
	resumed time.Time

	mu    sync.Mutex
	state State
}

// NewWatcher watches cfg.ConfDir for cfg.Entry; cfg must be Finish()ed.
func NewWatcher(cfg Config, opt WatchOptions, log *slog.Logger) *Watcher {
	return newWatcher(NewInstaller(cfg), opt, log)
}

func newWatcher(in *Installer, opt WatchOptions, log *slog.Logger) *Watcher {
	opt.defaults()
	return &Watcher{
		in: in, dir: in.dir, opt: opt, log: log,
		guard: newGuard(opt),
		state: State{Phase: PhaseStarting},
	}
}

// Run keeps the entry in place until ctx ends, or until raild install-cni
// --uninstall removes it; the reason stays in State. After a fight it
// pauses until the conf dir has been quiet for a while, then tries again.
func (w *Watcher) Run(ctx context.Context) error {
	var dw dirWatch
	defer dw.close()
	timer := time.NewTimer(0)
	defer timer.Stop()
	backoff := w.opt.MinBackoff
	paused := false
	for {
		select {
		case <-ctx.Done():
			w.forgetUninstall()
			return nil
		case ev, ok := <-dw.events():
			switch {
			case !dw.relevant(ev, ok, w.dir):
			case isMarker(ev):
				timer.Reset(0) // seen before raild, stopping after the uninstall, exits
			case paused:
				timer.Reset(w.pause) // the quiet time starts again
			default:
				timer.Reset(w.opt.Debounce)
			}
		case err := <-dw.errors():
			w.log.Warn("conf dir watch", "dir", w.dir, "error", err)
			if !paused {
				timer.Reset(w.opt.Debounce)
			}
		case <-timer.C:
			if paused {
				paused, w.resumed = false, w.opt.Now()
				w.guard.forget()
			}
			err := w.pass(&dw)
			switch {
			case errors.Is(err, ErrUninstalled):
				w.forgetUninstall()
				return nil
			case errors.Is(err, ErrFight):
				paused = true
				timer.Reset(w.pause)
				continue
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

// nextPause is the pause after a fight: FightPause, or twice the last one
// when this fight follows the last resume within FightWindow.
func (w *Watcher) nextPause() time.Duration {
	if w.pause == 0 || w.resumed.IsZero() || w.opt.Now().Sub(w.resumed) > w.opt.FightWindow {
		return w.opt.FightPause
	}
	return min(2*w.pause, w.opt.MaxFightPause)
}

// reconcile is one pass: the entry is put in place if it is missing.
// Its own writes cause a pass too, which finds the entry and writes nothing.
func (w *Watcher) reconcile() error {
	if err := w.begin(); err != nil {
		w.report(Result{}, err)
		return err
	}
	res, err := w.in.Install(w.guard.allow)
	if err == nil {
		w.guard.installed(res)
	}
	if errors.Is(err, ErrFight) {
		w.pause = w.nextPause()
		err = fmt.Errorf("%w; rail tries again once the conf dir has not changed for %s", err, w.pause)
	}
	if res.Changed {
		w.log.Info("inserted rail's entry into the primary's CNI config", "file", res.File, "primary", res.Target,
			"was", entryStateName(res.Entry))
	}
	w.report(res, err)
	return err
}

// begin prepares the conf dir once, when it is first there: the temp
// files of an earlier raild killed mid-write go, and so does the marker of
// an uninstall that happened before this watcher started (a raild that
// starts installs).
func (w *Watcher) begin() error {
	if w.begun {
		return nil
	}
	had, err := w.in.prepare()
	if err != nil {
		return err
	}
	if had {
		w.log.Info("removed the marker of an earlier raild install-cni --uninstall: this raild puts the entry back", "dir", w.dir)
	}
	w.begun = true
	return nil
}

// forgetUninstall removes the uninstall marker when the watcher ends: it
// was meant for this watcher only, and is not left in the conf dir.
func (w *Watcher) forgetUninstall() {
	if err := w.in.forgetUninstall(); err != nil && !errors.Is(err, ErrNoConfDir) {
		w.log.Warn("cannot remove the uninstall marker", "dir", w.dir, "error", err)
	}
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
