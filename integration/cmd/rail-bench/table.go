package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// tableHeader is the printed table's header: every figure in ms; a cell
// with two figures is "p50 / p99" or "ADD / DEL" as the row says.
const tableHeader = "| scenario | figure (ms) | rail | upstream | rail ÷ upstream | floor | rail ÷ floor |\n" +
	"|---|---|---|---|---|---|---|\n"

// comparison is one scenario's figures, the exec floor's, the write
// floor's and, where rail works alone, the kernel floor's of rail's mode.
type comparison struct {
	name                  string
	rail, upstream, floor figures
	kernel                *figures // nil: no mode floor
	write                 *figures // nil: no write floor measured
}

// floorSet are the floors as the table shows them on their own: the exec
// of a no-op plugin, the kernel's own work of each mode and one durable
// write (nil: not measured).
type floorSet struct {
	exec   figures
	kernel []kernelFloor
	write  *figures
}

// kernelFloor is one attach mode's kernel floor as the table shows it:
// its ADD / DEL p50 under each, the whole cycle's p50 / p99 under both.
type kernelFloor struct {
	each, both string
	f          figures
}

// row is one table line: the same figure for rail, upstream and the floor.
type row struct {
	label                  string
	rail, upstream, floor  []time.Duration // one or two values each
	railNote, upstreamNote string          // shown after the values
	noRatios               bool            // the values are not the same figure's
}

// writeTable prints the scenarios, then the floors and raild's idle rate
// (mean over its idle windows, highest of one), per second.
func writeTable(w io.Writer, comps []comparison, bursts []int, floors floorSet, idle []time.Duration) {
	var b strings.Builder
	b.WriteString(tableHeader)
	for _, c := range comps {
		for i, r := range comparisonRows(c, bursts) {
			name := ""
			if i == 0 {
				name = c.name
			}
			b.WriteString(r.format(name))
		}
	}
	b.WriteString(floorRows(floors, idle))
	fmt.Fprint(w, b.String())
}

func comparisonRows(c comparison, bursts []int) []row {
	rows := []row{
		pairRow("ADD, p50 / p99", c, func(f figures) []time.Duration { return []time.Duration{f.add.p50, f.add.p99} }),
		pairRow("DEL, p50 / p99", c, func(f figures) []time.Duration { return []time.Duration{f.del.p50, f.del.p99} }),
		pairRow("ADD+DEL, p50 / p99", c, func(f figures) []time.Duration { return []time.Duration{f.cycle.p50, f.cycle.p99} }),
	}
	rows = append(rows, floorRatioRows(c)...)
	for _, size := range bursts {
		rows = append(rows, pairRow(fmt.Sprintf("burst of %d pods, wall: ADD / DEL", size), c, func(f figures) []time.Duration {
			if got, ok := f.bursts[size]; ok {
				return got[:]
			}
			return nil
		}))
	}
	seq := func(f figures) cpuFigure { return cpuFigure{plugins: f.cpu, raild: f.raild.seq.perPod()} }
	rows = append(rows, cpuRow("CPU per ADD+DEL, sequential (plugins + raild)", c, seq),
		raildRow("raild's CPU per ADD+DEL, sequential, less idle: rail's pod / a pod it does not serve", c, seq))
	if len(bursts) > 0 {
		largest := slices.Max(bursts)
		burst := func(f figures) cpuFigure {
			return cpuFigure{plugins: f.burstCPU[largest], raild: f.raild.burst.perPod()}
		}
		rows = append(rows, cpuRow(fmt.Sprintf("CPU per pod, bursts of %d (plugins + raild)", largest), c, burst),
			raildRow(fmt.Sprintf("raild's CPU per pod, bursts of %d, less idle: rail's / not served", largest), c, burst))
	}
	return rows
}

// floorRatioRows set rail's ADD and DEL (p50) against each floor of the
// scenario measured in the same run — the kernel's own work of its mode
// (one move; one macvlan created, then deleted), one durable write — and
// against the mode's floor, their sum with the exec of a no-op plugin
// (the ADD and DEL rows above hold the ratios to the exec floor alone).
// A floor not measured, or none for the scenario (rail chained after
// another plugin has no mode floor), gives no row.
func floorRatioRows(c comparison) []row {
	p50s := func(f figures) []time.Duration { return []time.Duration{f.add.p50, f.del.p50} }
	floorRow := func(label string, floor []time.Duration) row {
		return row{label: label, rail: p50s(c.rail), upstream: p50s(c.upstream), floor: floor}
	}
	var rows []row
	if c.kernel != nil {
		rows = append(rows, floorRow("ADD / DEL p50 vs the kernel's own work for the mode", p50s(*c.kernel)))
	}
	if c.write != nil {
		rows = append(rows, floorRow("ADD / DEL p50 vs one durable write", p50s(*c.write)))
	}
	if c.kernel != nil {
		sum := []time.Duration{c.floor.add.p50 + c.kernel.add.p50, c.floor.del.p50 + c.kernel.del.p50}
		label := "ADD / DEL p50 vs the mode's floor (exec + kernel)"
		if c.write != nil {
			sum[0], sum[1] = sum[0]+c.write.add.p50, sum[1]+c.write.del.p50
			label = "ADD / DEL p50 vs the mode's floor (exec + kernel + durable write)"
		}
		rows = append(rows, floorRow(label, sum))
	}
	return rows
}

// cpuFigure is CPU per pod: the plugin processes', and raild's (its CPU
// in the side's window less its idle twin's, per pod).
type cpuFigure struct {
	plugins, raild time.Duration
}

// cpuRow shows CPU use. Only rail talks to raild, so raild's CPU counts
// for rail (what it does in the upstream side's window, noticing its
// links, is shown beside the upstream figure and in raildRow).
func cpuRow(label string, c comparison, pick func(figures) cpuFigure) row {
	rail, upstream := pick(c.rail), pick(c.upstream)
	return row{label: label, rail: []time.Duration{rail.plugins + rail.raild},
		upstream: []time.Duration{upstream.plugins}, floor: []time.Duration{pick(c.floor).plugins},
		railNote: fmt.Sprintf(" (raild %s)", ms(rail.raild)), upstreamNote: fmt.Sprintf(" (raild %s)", ms(upstream.raild))}
}

// raildRow is raild's own CPU: per rail pod, with its ratio to the CPU of
// the plugin processes of the same pods, and per upstream pod, one raild
// does not serve (what it pays for noticing other plugins' links).
func raildRow(label string, c comparison, pick func(figures) cpuFigure) row {
	rail, upstream := pick(c.rail), pick(c.upstream)
	note := ""
	if rail.plugins > 0 {
		note = fmt.Sprintf(" (%.2f× the plugins')", float64(rail.raild)/float64(rail.plugins))
	}
	return row{label: label, rail: []time.Duration{rail.raild}, upstream: []time.Duration{upstream.raild},
		railNote: note, noRatios: true}
}

func pairRow(label string, c comparison, pick func(figures) []time.Duration) row {
	return row{label: label, rail: pick(c.rail), upstream: pick(c.upstream), floor: pick(c.floor)}
}

// format prints the row: values, and rail's ratios where both sides have
// the figure.
func (r row) format(scenario string) string {
	byUpstream, byFloor := ratios(r.rail, r.upstream), ratios(r.rail, r.floor)
	if r.noRatios {
		byUpstream, byFloor = "—", "—"
	}
	return fmt.Sprintf("| %s | %s | %s%s | %s%s | %s | %s | %s |\n", scenario, r.label, values(r.rail), r.railNote,
		values(r.upstream), r.upstreamNote, byUpstream, values(r.floor), byFloor)
}

// floorRows are the floors on their own, in the floor column, and raild's
// idle rate.
func floorRows(floors floorSet, idle []time.Duration) string {
	line := func(scenario, label string, v ...time.Duration) string {
		return fmt.Sprintf("| %s | %s |  |  |  | %s |  |\n", scenario, label, values(v))
	}
	exec := floors.exec
	out := line("**floors**", "exec: no-op plugin through libcni, ADD / DEL p50", exec.add.p50, exec.del.p50) +
		line("", "exec: ADD+DEL, p50 / p99", exec.cycle.p50, exec.cycle.p99)
	for _, k := range floors.kernel {
		out += line("", "kernel: "+k.each+", p50", k.f.add.p50, k.f.del.p50) +
			line("", "kernel: "+k.both+", p50 / p99", k.f.cycle.p50, k.f.cycle.p99)
	}
	if w := floors.write; w != nil {
		out += line("", fmt.Sprintf("write: one durable %d KiB write (pwrite + fdatasync) on raild's state dir's filesystem, p50 / p99",
			writeFloorSize/1024), w.add.p50, w.add.p99)
	}
	return out + line("**raild idle**", "raild's CPU per s with nothing happening: all idle windows / the highest one", idle...)
}

func values(v []time.Duration) string {
	if len(v) == 0 {
		return "—"
	}
	parts := make([]string, len(v))
	for i, d := range v {
		parts[i] = ms(d)
	}
	return strings.Join(parts, " / ")
}

func ratios(num, den []time.Duration) string {
	if len(num) == 0 || len(num) != len(den) {
		return "—"
	}
	parts := make([]string, len(num))
	for i := range num {
		if den[i] <= 0 {
			return "—"
		}
		parts[i] = fmt.Sprintf("%.2f×", float64(num[i])/float64(den[i]))
	}
	return strings.Join(parts, " / ")
}

// ms prints a duration in milliseconds with three significant digits
// (whole milliseconds from 100 ms up).
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
