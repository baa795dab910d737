package cniconf

import (
	"errors"
	"fmt"
)

// Phase is where the watcher stands.
type Phase string

// Phases of a Watcher.
const (
	PhaseStarting Phase = "starting" // no pass done yet
	PhaseInPlace  Phase = "in place" // the entry is in the runtime's file
	PhaseRetrying Phase = "retrying" // the last pass failed; retried with backoff and on every change
	PhasePaused   Phase = "paused"   // a fight: passes resume once the conf dir is quiet for a while
	PhaseStopped  Phase = "stopped"  // an uninstall: no more passes
)

// State is what /readyz and the tests see of a Watcher.
type State struct {
	Phase Phase
	// File holds the entry (in place) or is the file that failed.
	File string
	// Err is why the entry is not in place.
	Err error
	// Passes counts passes (successful or not); Writes counts insertions.
	Passes, Writes int
}

// State returns the watcher's current state.
func (w *Watcher) State() State {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

// Ready is nil when rail's entry is in place, else says why it is not.
func (w *Watcher) Ready() error {
	st := w.State()
	switch st.Phase {
	case PhaseInPlace:
		return nil
	case PhaseStarting:
		return errors.New("cni: rail's entry in the primary's conflist is not checked yet")
	}
	return fmt.Errorf("cni: rail's entry is not in the primary's conflist (%s): %w", st.Phase, st.Err)
}

// report records a pass (or a failure to watch) and logs what changed: a
// failure is logged when its message differs from the last one.
func (w *Watcher) report(res Result, err error) {
	w.mu.Lock()
	prev := w.state
	next := State{Phase: PhaseInPlace, File: res.File, Err: err, Passes: prev.Passes + 1, Writes: prev.Writes}
	if res.Changed {
		next.Writes++
	}
	switch {
	case errors.Is(err, ErrUninstalled):
		next.Phase = PhaseStopped
	case errors.Is(err, ErrFight):
		next.Phase = PhasePaused
	case err != nil:
		next.Phase = PhaseRetrying
	}
	w.state = next
	w.mu.Unlock()
	w.logTransition(prev, next)
}

func (w *Watcher) logTransition(prev, next State) {
	switch {
	case next.Phase == PhaseStopped:
		w.log.Info("stopped keeping rail's entry in the primary's CNI config", "dir", w.dir, "error", next.Err)
	case next.Phase == PhasePaused:
		w.log.Error("paused keeping rail's entry in the primary's CNI config", "dir", w.dir, "error", next.Err)
	case next.Err != nil && (prev.Err == nil || prev.Err.Error() != next.Err.Error()):
		w.log.Warn("rail's entry is not in the primary's CNI config; retrying", "dir", w.dir, "error", next.Err)
	case next.Err != nil:
		w.log.Debug("still retrying", "dir", w.dir, "error", next.Err)
	case prev.Phase != PhaseInPlace:
		w.log.Info("rail's entry is in place", "file", next.File)
	}
}
