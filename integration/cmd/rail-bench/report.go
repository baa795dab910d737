package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// settings says how the figures were made, under the table.
func (b *bench) settings(opt options, took time.Duration, loadBefore, loadAfter string, leaks []string) string {
	timing := raildTiming()
	lines := []string{
		fmt.Sprintf("%d rounds of sequential ADD+DEL per side after %d warm-up, the %d sides rotated each round; "+
			"bursts: the fastest of %d per size and phase, sides rotated; CPU: user+sys of the plugin processes (rusage of children), "+
			"plus raild's own for rail. raild's CPU (its process CPU clock, ns, all threads) is measured apart, per side, in windows of "+
			"%d pods one after another and of one burst of %d, each open %s past its last pod (raild's follow-up reads come 2 s after "+
			"a burst of link events) and opened clear of the ticks of raild's %s rescan timer (one found first by watching raild idle), "+
			"less the same window's length with nothing happening, taken a whole number of %s later (the same phase of raild's timers), "+
			"per pod; beside upstream it is what pods raild does not serve cost it. "+
			"Floors, each measured in the same run: exec (a no-op plugin through libcni), the kernel's own work for rail's mode, "+
			"one durable 4 KiB write (pwrite + fdatasync, as each lease store commit is made durable before raild answers, "+
			"in a file beside raild's state dir); the mode's floor is their sum (none for rail chained after ptp, whose ADD holds ptp's work). "+
			"Goals (issue 28): ADD p50 within 1.5× of the mode's floor, DEL p50 within 1.3× of the kernel's own work for the mode.",
			opt.rounds, opt.warmup, len(b.sides.all()), opt.burstReps, opt.rounds, slices.Max(opt.bursts), timing.settle, timing.rescan,
			timing.period),
		fmt.Sprintf("Node: %s, 1 GPU, ConnectX-7 RoCE PF + %d VFs (veth stand-ins), raild in the node netns; "+
			"upstream plugins %s; rail, cni-noop from this tree.", benchMachine, len(b.pods), b.upstream),
		fmt.Sprintf("Machine: %s, %d CPUs, %s; load average %s before, %s after; %s.",
			kernelRelease(), runtime.NumCPU(), runtime.Version(), loadBefore, loadAfter, took.Round(time.Second)),
	}
	if len(leaks) == 0 {
		lines = append(lines, "Leaks: none (pod links, node links/addresses/routes/rules, stand-in NICs, raild leases "+
			"and open files, pod netns, host-local reservations, CNI cache).")
	} else {
		lines = append(lines, fmt.Sprintf("Leaks: %d (listed on stderr).", len(leaks)))
	}
	return strings.Join(lines, "\n")
}

// loadAverage is the 1-minute load average ("?" when unreadable).
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if fields := strings.Fields(string(data)); err == nil && len(fields) > 0 {
		return fields[0]
	}
	return "?"
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "Linux (release unknown)"
	}
	return "Linux " + unix.ByteSliceToString(u.Release[:])
}
