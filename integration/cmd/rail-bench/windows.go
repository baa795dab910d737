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
}

// raildTiming is raild's: 2 s after the last link event of a burst
// (itself settled for 100 ms) it reads a NIC's RDMA device again, the
// follow-up; its timers (daemon/serve) are the full rescan every 30 s and
// the reconcile every minute, both tickers from raild's start.
func raildTiming() windowTiming { return windowTiming{settle: 3 * time.Second, period: time.Minute} }

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

// window is one planned window: its pods, and where its figures go.
type window struct {
	pods func(ctx context.Context) (int, error)
	into *raildWindow
}

// raildWindows measures the CPU of process pid (raild) for each side in
// windows of their own: seqPods pods added and deleted one after another,
// then a burst of burstSize, each window open until timing.settle past its
// last pod. Then, a whole number of timing.period after the first window
// opened, it replays every window's span with nothing happening: the idle
// twins. Windows never share a pod's work, and the timers' work falls
// alike in a window and its twin.
func (m *measurer) raildWindows(ctx context.Context, pid int, sides []side, seqPods, burstSize int,
	timing windowTiming, log io.Writer) error {
	var plan []window
	for _, s := range sides {
		rec, size := m.records[s], min(burstSize, s.capacity())
		plan = append(plan, window{into: &rec.raild.seq, pods: func(ctx context.Context) (int, error) {
			for range seqPods {
				if _, err := m.cycle(ctx, s); err != nil {
					return 0, err
				}
				if err := s.tidy(1); err != nil {
					return 0, err
				}
			}
			return seqPods, nil
		}}, window{into: &rec.raild.burst, pods: func(ctx context.Context) (int, error) {
			if _, err := m.burst(ctx, s, size); err != nil {
				return 0, fmt.Errorf("burst of %d: %w", size, err)
			}
			return size, s.tidy(size)
		}})
	}
	fmt.Fprintf(log, "rail-bench: raild's CPU: %d windows of pods, each open %s past its last pod...\n", len(plan), timing.settle)
	start := time.Now()
	type span struct{ from, to time.Duration } // since start
	spans := make([]span, len(plan))
	for i, w := range plan {
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
