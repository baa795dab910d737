package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// windowTiming lays raild's CPU windows out.
type windowTiming struct {
	// settle is how long a window stays open after its last pod is
	// deleted, so that what the pods set off in raild is theirs.
	settle time.Duration
	// period is a common multiple of the periods of raild's own timers. An
	// idle window opened a whole number of periods after its busy window
	// meets the same ticks, so subtracting it takes out what the timers
	// cost, whichever window they fall in.
	period time.Duration
	// rescan is the period of raild's full rescan, whose ticks windows
	// keep out of (tickZones) once one is seen: zoneBefore to zoneAfter
	// around each (0: none looked for).
	rescan, zoneBefore, zoneAfter time.Duration
}

// raildTiming is raild's: 2 s after the last link event of a burst
// (itself settled for 100 ms) it reads a NIC's RDMA device again, the
// follow-up; its timers (daemon/serve) are the full rescan every 30 s and
// the reconcile every minute, both tickers from raild's start.
func raildTiming() windowTiming {
	return windowTiming{settle: 3 * time.Second, period: time.Minute,
		rescan: 30 * time.Second, zoneBefore: time.Second, zoneAfter: 2 * time.Second}
}

// minTickCost is the least CPU a burst of raild's, idle, must cost to be
// taken for the rescan timer's tick.
const minTickCost = 5 * time.Millisecond

// raildWindow is raild's CPU in one window of pods and in its idle twin,
// a window of the same length at the same phase of raild's timers with
// nothing happening.
type raildWindow struct {
	pods       int           // pods added and deleted in the window
	wall       time.Duration // the length of each window
	busy, idle time.Duration // raild's CPU in the window, in its idle twin
}

// perPod is what each pod cost raild: its CPU in the window less its CPU
// with nothing happening, per pod.
func (w raildWindow) perPod() time.Duration {
	if w.pods == 0 {
		return 0
	}
	return (w.busy - w.idle) / time.Duration(w.pods)
}

// raildFigures are one side's windows: pods one after another, and one
// burst.
type raildFigures struct {
	seq, burst raildWindow
}

// window is one planned window: its pods, how long it should stay open
// (from what the side took in the rounds and bursts), and where its
// figures go.
type window struct {
	pods   func(ctx context.Context) (int, error)
	expect time.Duration
	into   *raildWindow
}

// raildWindows measures the CPU of process pid (raild) for each side in
// windows of their own: seqPods pods added and deleted one after another,
// then a burst of burstSize, each window open until timing.settle past its
// last pod, and opened where it should hold no tick of raild's rescan
// timer (tickZones, from a tick seen while raild is idle first). Then, a
// whole number of timing.period after the first window opened, it replays
// every window's span with nothing happening: the idle twins. Windows
// never share a pod's work, and the timers' work (what of it the zones do
// not keep out) falls alike in a window and its twin.
func (m *measurer) raildWindows(ctx context.Context, pid int, sides []side, seqPods, burstSize int,
	timing windowTiming, log io.Writer) error {
	var plan []window
	for _, s := range sides {
		plan = append(plan, m.seqWindow(s, seqPods, timing.settle), m.burstWindow(s, min(burstSize, s.capacity()), timing.settle))
	}
	zones, err := findZones(ctx, pid, timing, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "rail-bench: raild's CPU: %d windows of pods, each open %s past its last pod...\n", len(plan), timing.settle)
	start := time.Now()
	type span struct{ from, to time.Duration } // since start
	spans := make([]span, len(plan))
	for i, w := range plan {
		if err := sleepUntil(ctx, time.Now().Add(zones.wait(time.Now(), w.expect))); err != nil {
			return err
		}
		from := time.Since(start)
		before, err := processCPU(pid)
		if err != nil {
			return err
		}
		pods, err := w.pods(ctx)
		if err != nil {
			return err
		}
		if err := sleepUntil(ctx, time.Now().Add(timing.settle)); err != nil {
			return err
		}
		after, err := processCPU(pid)
		if err != nil {
			return err
		}
		spans[i] = span{from: from, to: time.Since(start)}
		*w.into = raildWindow{pods: pods, wall: spans[i].to - from, busy: after - before}
	}
	offset := time.Since(start).Truncate(timing.period) + timing.period
	fmt.Fprintf(log, "rail-bench: raild's CPU: the idle twins, %s after their windows...\n", offset)
	for i, w := range plan {
		if err := sleepUntil(ctx, start.Add(offset+spans[i].from)); err != nil {
			return err
		}
		before, err := processCPU(pid)
		if err != nil {
			return err
		}
		if err := sleepUntil(ctx, start.Add(offset+spans[i].to)); err != nil {
			return err
		}
		after, err := processCPU(pid)
		if err != nil {
			return err
		}
		w.into.idle = after - before
	}
	return nil
}

// seqWindow is pods ADD+DELs of side s one after another.
func (m *measurer) seqWindow(s side, pods int, settle time.Duration) window {
	rec := m.records[s]
	return window{into: &rec.raild.seq, expect: settle + seqExpect(rec.seq, pods),
		pods: func(ctx context.Context) (int, error) {
			for range pods {
				if _, err := m.cycle(ctx, s); err != nil {
					return 0, err
				}
				if err := s.tidy(1); err != nil {
					return 0, err
				}
			}
			return pods, nil
		}}
}

// burstWindow is one burst of size pods of side s.
func (m *measurer) burstWindow(s side, size int, settle time.Duration) window {
	rec := m.records[s]
	return window{into: &rec.raild.burst, expect: settle + burstExpect(rec.bursts[size]),
		pods: func(ctx context.Context) (int, error) {
			if _, err := m.burst(ctx, s, size); err != nil {
				return 0, fmt.Errorf("burst of %d: %w", size, err)
			}
			return size, s.tidy(size)
		}}
}

// findZones lets what came before settle, then watches raild idle for a
// tick of its rescan timer (none looked for when timing.rescan is 0).
func findZones(ctx context.Context, pid int, timing windowTiming, log io.Writer) (tickZones, error) {
	zones := tickZones{period: timing.rescan, before: timing.zoneBefore, after: timing.zoneAfter}
	if timing.rescan <= 0 {
		return zones, nil
	}
	if err := sleepUntil(ctx, time.Now().Add(timing.settle)); err != nil {
		return zones, err
	}
	fmt.Fprintf(log, "rail-bench: raild's CPU: watching raild idle for its %s rescan timer...\n", timing.rescan)
	tick, err := findTick(ctx, pid, timing.rescan, 250*time.Millisecond, minTickCost)
	if err != nil {
		return zones, err
	}
	if tick.IsZero() {
		fmt.Fprintf(log, "rail-bench: raild's CPU: no tick of %s or more seen; windows open at once\n", minTickCost)
	}
	zones.tick = tick
	return zones, nil
}

// seqExpect is how long pods sequential ADD+DELs should take, from the
// side's rounds (with room for the machine's noise).
func seqExpect(rounds []sample, pods int) time.Duration {
	var sum time.Duration
	for _, s := range rounds {
		sum += s.add + s.del
	}
	if len(rounds) == 0 {
		return 0
	}
	return sum / time.Duration(len(rounds)) * time.Duration(pods) * 3 / 2
}

// burstExpect is how long a burst should take, from the side's bursts of
// that size (with room for the machine's noise).
func burstExpect(bursts []sample) time.Duration {
	var longest time.Duration
	for _, s := range bursts {
		longest = max(longest, s.add+s.del)
	}
	return longest * 3 / 2
}

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// idleRate is raild's CPU per second of wall time with nothing
// happening: over all the idle twins, and the highest of one.
func idleRate(windows []raildWindow) (mean, highest time.Duration) {
	var idle, wall time.Duration
	for _, w := range windows {
		if w.wall <= 0 {
			continue
		}
		idle, wall = idle+w.idle, wall+w.wall
		highest = max(highest, perSecond(w.idle, w.wall))
	}
	return perSecond(idle, wall), highest
}

func perSecond(cpu, wall time.Duration) time.Duration {
	if wall <= 0 {
		return 0
	}
	return time.Duration(float64(cpu) * float64(time.Second) / float64(wall))
}
