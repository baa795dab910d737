package cniconf

import (
	"errors"
	"fmt"
	"time"
)

// Reasons the watcher stops putting its entry back.
var (
	ErrFight = errors.New("another agent keeps removing rail's entry")
	// ErrUninstalled: raild install-cni --uninstall removed the entry.
	ErrUninstalled = errors.New("rail's entry was removed by raild install-cni --uninstall")
)

// guard decides, before each insertion, whether the watcher may write. It
// remembers the files where it saw its entry in place: such a file without
// the entry (or with another one) was reverted by its writer (count it; too
// many within the window is a fight), or uninstalled when the entry and its
// backup are both gone.
type guard struct {
	reverts int
	window  time.Duration
	now     func() time.Time

	seen  map[string]bool
	times []time.Time
}

func newGuard(reverts int, window time.Duration, now func() time.Time) *guard {
	return &guard{reverts: reverts, window: window, now: now, seen: map[string]bool{}}
}

// inPlace notes that the entry is in place for st.Target.
func (g *guard) inPlace(st Status) {
	g.seen[st.Target] = true
	g.seen[st.File] = true
}

// forget drops what the guard saw: the files it knew are gone.
func (g *guard) forget() {
	clear(g.seen)
	g.times = g.times[:0]
}

// allow is Installer.Install's guard.
func (g *guard) allow(st Status) error {
	if st.Entry == EntryCurrent || !g.seen[st.Target] {
		return nil
	}
	if st.Entry == EntryMissing && !st.Recorded {
		return fmt.Errorf("%s: %w; not putting it back (restart raild to install it again)", st.Target, ErrUninstalled)
	}
	now := g.now()
	kept := g.times[:0]
	for _, t := range g.times {
		if now.Sub(t) < g.window {
			kept = append(kept, t)
		}
	}
	g.times = append(kept, now)
	if len(g.times) < g.reverts {
		return nil
	}
	return fmt.Errorf("%s: %w: it was rewritten without rail's entry (or with another one) %d times within %s, so rail stopped putting it back. "+
		"Cilium does this with cni.exclusive=true (the chart's default): chain rail through Cilium's own settings "+
		"(cni.exclusive=false with cni.customConf/cni.configMap, or cni.chainingTarget) and set raild's cni.mode to nad; "+
		"for another CNI, stop the agent that rewrites the file, then restart raild",
		st.Target, ErrFight, len(g.times), g.window)
}

// stops says whether err ends the watcher's work for good.
func stops(err error) bool {
	return errors.Is(err, ErrFight) || errors.Is(err, ErrUninstalled)
}
