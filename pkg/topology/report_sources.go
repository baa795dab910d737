package topology

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Disagreement is a GPU/NIC pair whose class in the topology file differs
// from what sysfs's PCIe tree gives.
type Disagreement struct {
	GPU   int    `json:"gpu"`
	NIC   string `json:"nic"`
	File  Class  `json:"file"`
	Sysfs Class  `json:"sysfs"`
}

// disagreements lists the pairs the topology file names where sysfs says
// otherwise (on a Hyper-V VM, every pair: sysfs shows no switches).
func (m *Machine) disagreements() []Disagreement {
	var out []Disagreement
	for _, g := range m.GPUs {
		for _, n := range m.NICs {
			file, _, ok := m.TopologyFile.distance(g.PCI, n.PCI)
			if !ok {
				continue
			}
			if sysfs, _ := distance(g, n); sysfs != file {
				out = append(out, Disagreement{GPU: g.Index, NIC: n.Name, File: file, Sysfs: sysfs})
			}
		}
	}
	return out
}

// maxDisagreementLines bounds the text report; --json has them all.
const maxDisagreementLines = 8

// writeSources says where the matrix's classes came from and where the
// topology file and sysfs disagree.
func writeSources(tw io.Writer, r Report) {
	counts := map[Source]int{}
	for _, row := range r.Sources {
		for _, s := range row {
			counts[s]++
		}
	}
	if len(counts) == 0 {
		return
	}
	var parts []string
	for _, s := range []Source{SourceFile, SourceSysfs, SourceSocket, SourceNUMA} {
		if n := counts[s]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" from "+sourceText(s, r.TopologyFile))
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "Distances: %s\n", strings.Join(parts, ", "))
	if r.FlatPCI && r.TopologyFile == "" {
		fmt.Fprintf(tw, "  %s\n", FlatPCIProblem)
	}
	if len(r.Disagreements) == 0 {
		if r.TopologyFile != "" {
			fmt.Fprintln(tw, "  the topology file and sysfs agree on every pair it names")
		}
		return
	}
	fmt.Fprintf(tw, "  the topology file and sysfs disagree on %d pair(s) (the file wins):\n", len(r.Disagreements))
	ds := slices.Clone(r.Disagreements)
	for i, d := range ds {
		if i == maxDisagreementLines {
			fmt.Fprintf(tw, "  … %d more (raild topo --json)\n", len(ds)-i)
			break
		}
		fmt.Fprintf(tw, "  GPU%d–%s:\tfile %s, sysfs %s\n", d.GPU, d.NIC, d.File, d.Sysfs)
	}
}

func sourceText(s Source, file string) string {
	switch s {
	case SourceFile:
		return "the NCCL topology file " + file
	case SourceSocket:
		return "CPU sockets (C2C-attached GPUs)"
	case SourceNUMA:
		return "NUMA nodes (sysfs shows no switches)"
	}
	return "sysfs's PCIe tree"
}
