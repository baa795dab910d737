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

// comparison is one scenario's figures and the exec floor's.
type comparison struct {
	name                  string
	rail, upstream, floor figures
}

// row is one table line: the same figure for rail, upstream and the floor.
type row struct {
	label                 string
	rail, upstream, floor []time.Duration // one or two values each
	railNote              string          // shown after rail's values
}

// writeTable prints the scenarios, then the floors.
func writeTable(w io.Writer, comps []comparison, bursts []int, exec, kernel figures) {
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
	b.WriteString(floorRows(exec, kernel))
	fmt.Fprint(w, b.String())
}

func comparisonRows(c comparison, bursts []int) []row {
	rows := []row{
		pairRow("ADD, p50 / p99", c, func(f figures) []time.Duration { return []time.Duration{f.add.p50, f.add.p99} }),
		pairRow("DEL, p50 / p99", c, func(f figures) []time.Duration { return []time.Duration{f.del.p50, f.del.p99} }),
		pairRow("ADD+DEL, p50 / p99", c, func(f figures) []time.Duration { return []time.Duration{f.cycle.p50, f.cycle.p99} }),
	}
	for _, size := range bursts {
		rows = append(rows, pairRow(fmt.Sprintf("burst of %d pods, wall: ADD / DEL", size), c, func(f figures) []time.Duration {
			if got, ok := f.bursts[size]; ok {
				return got[:]
			}
			return nil
		}))
	}
	rows = append(rows, cpuRow("CPU per ADD+DEL, sequential (plugins + raild)", c, func(f figures) cpuUse { return f.cpu }))
	if len(bursts) > 0 {
		largest := slices.Max(bursts)
		rows = append(rows, cpuRow(fmt.Sprintf("CPU per pod, bursts of %d (plugins + raild)", largest), c,
			func(f figures) cpuUse { return f.burstCPU[largest] }))
	}
	return rows
}

// cpuRow shows CPU use. Only rail talks to raild, so raild's CPU counts
// for rail alone (what it does in other sides' windows, such as noticing
// a host-device move, is left out) and is also shown apart.
func cpuRow(label string, c comparison, pick func(figures) cpuUse) row {
	rail := pick(c.rail)
	return row{label: label, rail: []time.Duration{rail.children + rail.raild},
		upstream: []time.Duration{pick(c.upstream).children}, floor: []time.Duration{pick(c.floor).children},
		railNote: fmt.Sprintf(" (raild %s)", ms(rail.raild))}
}

func pairRow(label string, c comparison, pick func(figures) []time.Duration) row {
	return row{label: label, rail: pick(c.rail), upstream: pick(c.upstream), floor: pick(c.floor)}
}

// format prints the row: values, and rail's ratios where both sides have
// the figure.
func (r row) format(scenario string) string {
	return fmt.Sprintf("| %s | %s | %s%s | %s | %s | %s | %s |\n", scenario, r.label, values(r.rail), r.railNote,
		values(r.upstream), ratios(r.rail, r.upstream), values(r.floor), ratios(r.rail, r.floor))
}

// floorRows are the floors on their own, in the floor column.
func floorRows(exec, kernel figures) string {
	line := func(scenario, label string, v ...time.Duration) string {
		return fmt.Sprintf("| %s | %s |  |  |  | %s |  |\n", scenario, label, values(v))
	}
	return line("**floors**", "exec: no-op plugin through libcni, ADD / DEL p50", exec.add.p50, exec.del.p50) +
		line("", "exec: ADD+DEL, p50 / p99", exec.cycle.p50, exec.cycle.p99) +
		line("", "kernel: one netdev into a netns / back (one netlink message each), p50", kernel.add.p50, kernel.del.p50) +
		line("", "kernel: into and back, p50 / p99", kernel.cycle.p50, kernel.cycle.p99)
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
