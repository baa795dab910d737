package cniconf

import (
	"errors"
	"fmt"
	"time"
)

// Reasons the watcher does not put its entry back.
var (
	// ErrFight: the entry is reverted right after each insertion; the
	// watcher pauses.
	ErrFight = errors.New("another agent keeps removing rail's entry")
	// ErrUninstalled: raild install-cni --uninstall removed the entry; the
	// watcher stops.
	ErrUninstalled = errors.New("rail's entry was removed by raild install-cni --uninstall")
)

// guard decides, before each insertion, whether the watcher may write. A
// file found without the entry (or with another one) soon after rail wrote
// it was reverted by its writer: too many such reverts within the window
// is a fight. A rewrite long after rail's write is the primary doing its
// job (a restart, a config change) and is no revert. Only the uninstall
// marker says the entry was uninstalled.
type guard struct {
	reverts int
	window  time.Duration // reverts are counted within it
	after   time.Duration // a revert seen this soon after rail's write counts
	now     func() time.Time

	written map[string]time.Time // Target: when rail last wrote the entry for it
	times   []time.Time          // of the reverts counted
}

func newGuard(opt WatchOptions) *guard {
	return &guard{reverts: opt.FightReverts, window: opt.FightWindow, after: opt.FightAfter, now: opt.Now,
		written: map[string]time.Time{}}
}

// installed notes a successful pass: when it wrote, the time of the write.
func (g *guard) installed(res Result) {
	if res.Changed {
		g.written[res.Target] = g.now()
	}
}

// forget drops what the guard saw: the files it knew are gone, or the
// watcher resumes after a pause.
func (g *guard) forget() {
	clear(g.written)
	g.times = g.times[:0]
}

// allow is Installer.Install's guard.
func (g *guard) allow(st Status) error {
	if st.Uninstalled {
		return fmt.Errorf("%w; not putting it back (restart raild to install it again)", ErrUninstalled)
	}
	if st.Entry == EntryCurrent {
		return nil
	}
	now := g.now()
	if wrote, ok := g.written[st.Target]; !ok || now.Sub(wrote) > g.after {
		return nil
	}
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
	return fmt.Errorf("%s: %w: it was rewritten without rail's entry (or with another one) within %s of rail's write, %d times within %s. "+
		"Cilium does this with cni.exclusive=true (the chart's default): chain rail through Cilium's own settings "+
		"(cni.exclusive=false with cni.customConf/cni.configMap, or cni.chainingTarget) and set raild's cni.mode to nad; "+
		"for another CNI, stop the agent that rewrites the file",
		st.Target, ErrFight, g.after, len(g.times), g.window)
}
