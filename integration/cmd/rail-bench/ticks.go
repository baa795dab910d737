package main

import (
	"context"
	"time"
)

// tickZones are the spans around raild's periodic full rescan (and its
// reconcile, started with it) that a window keeps out of: the timer's
// work is large beside a pod's (tens of ms on the bench's node) and
// varies from tick to tick, so even an idle twin at the same phase would
// not take it out exactly.
type tickZones struct {
	tick          time.Time     // one tick seen (zero: none seen, no zones)
	period        time.Duration // the timer's period
	before, after time.Duration // the zone around each tick
}

// wait is how long to wait from now so that a window of length opened
// then holds no zone (0 when none was seen or the window is longer than
// the gap between two zones: it then opens at once).
func (z tickZones) wait(now time.Time, length time.Duration) time.Duration {
	if z.tick.IsZero() || z.period <= 0 || length > z.period-z.before-z.after {
		return 0
	}
	// The first zone ending after now: ticks at z.tick + k·period.
	k := now.Sub(z.tick.Add(z.after)) / z.period
	for zone := z.tick.Add(k * z.period); ; zone = zone.Add(z.period) {
		start, end := zone.Add(-z.before), zone.Add(z.after)
		switch {
		case !end.After(now):
			continue // behind us
		case !start.Before(now.Add(length)):
			return 0 // the window ends before the zone begins
		default:
			return end.Sub(now)
		}
	}
}

// tickSample is raild's CPU at one time.
type tickSample struct {
	at  time.Time
	cpu time.Duration
}

// findTick watches process pid, idle, for a period and a bit, and says
// when its largest burst of CPU within span began, if that burst cost at
// least minCost: the timer's tick.
func findTick(ctx context.Context, pid int, period, span, minCost time.Duration) (time.Time, error) {
	const every = 10 * time.Millisecond
	var samples []tickSample
	end := time.Now().Add(period + span + time.Second)
	for time.Now().Before(end) {
		cpu, err := processCPU(pid)
		if err != nil {
			return time.Time{}, err
		}
		samples = append(samples, tickSample{at: time.Now(), cpu: cpu})
		if err := sleepUntil(ctx, time.Now().Add(every)); err != nil {
			return time.Time{}, err
		}
	}
	return burstStart(samples, span, minCost), nil
}

// burstStart is when the largest rise of CPU within span began (the
// first step of it holding a tenth of the rise), or zero when no rise
// reaches minCost.
func burstStart(samples []tickSample, span, minCost time.Duration) time.Time {
	best, from := time.Duration(0), -1
	j := 0
	for i := range samples {
		for j < len(samples)-1 && samples[j].at.Sub(samples[i].at) < span {
			j++
		}
		if rise := samples[j].cpu - samples[i].cpu; rise > best {
			best, from = rise, i
		}
	}
	if from < 0 || best < minCost {
		return time.Time{}
	}
	for k := from; k < len(samples)-1; k++ {
		if samples[k+1].cpu-samples[k].cpu >= best/10 {
			return samples[k].at
		}
	}
	return samples[from].at
}
