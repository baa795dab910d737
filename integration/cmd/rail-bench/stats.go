package main

import (
	"slices"
	"time"
)

// figures summarise one side's record.
type figures struct {
	add, del, cycle stat                     // sequential
	cpu             time.Duration            // the plugins' CPU per sequential ADD+DEL
	bursts          map[int][2]time.Duration // per size: the fastest wall time of the ADDs, of the DELs
	burstCPU        map[int]time.Duration    // per size: the plugins' CPU per pod (ADD+DEL), mean of the bursts
	raild           raildFigures             // raild's CPU in the side's windows
}

// stat is the median and 99th percentile of a series.
type stat struct{ p50, p99 time.Duration }

func summarize(r *record) figures {
	f := figures{bursts: map[int][2]time.Duration{}, burstCPU: map[int]time.Duration{}, raild: r.raild}
	var adds, dels, cycles []time.Duration
	var cpu time.Duration
	for _, s := range r.seq {
		adds, dels, cycles = append(adds, s.add), append(dels, s.del), append(cycles, s.add+s.del)
		cpu += s.cpu
	}
	f.add, f.del, f.cycle = statOf(adds), statOf(dels), statOf(cycles)
	if n := time.Duration(len(r.seq)); n > 0 {
		f.cpu = cpu / n
	}
	for size, samples := range r.bursts {
		var adds, dels []time.Duration
		var cpu time.Duration
		for _, s := range samples {
			adds, dels = append(adds, s.add), append(dels, s.del)
			cpu += s.cpu
		}
		f.bursts[size] = [2]time.Duration{slices.Min(adds), slices.Min(dels)}
		f.burstCPU[size] = cpu / time.Duration(size*len(samples))
	}
	return f
}

func statOf(d []time.Duration) stat {
	return stat{p50: percentile(d, 50), p99: percentile(d, 99)}
}

// percentile is the nearest-rank p-th percentile (0 for no samples): the
// smallest value with at least p% of the samples at or below it.
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}
