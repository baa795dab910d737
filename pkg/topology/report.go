package topology

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Report is what `raild topo` prints: devices, the GPU×NIC distance
// matrix and the affinity, keyed by GPU index as a string.
type Report struct {
	GPUs     []GPU                       `json:"gpus"`
	NICs     []NIC                       `json:"nics"`
	Matrix   map[string]map[string]Class `json:"matrix"`
	Affinity map[string]string           `json:"affinity"`
	RdmaCM   *CharDev                    `json:"rdmaCM,omitempty"`
	Problems []Problem                   `json:"problems,omitempty"`
	// Holders names the pods holding each NIC in use, when the report
	// comes from a running raild (its leases); empty from a bare read.
	Holders map[string]string `json:"holders,omitempty"`
	// Protected are the node's own NICs and why (see Protection): from
	// sysfs alone in a bare read of a root, with the host's addresses and
	// routes from raild or a read of this host.
	Protected map[string]Protection `json:"protected,omitempty"`
	// Sources says where each class of Matrix came from (sysfs, file,
	// socket, numa), keyed the same way.
	Sources map[string]map[string]Source `json:"sources,omitempty"`
	// TopologyFile is the NCCL topology file in use, if any, and
	// Disagreements the pairs where it and sysfs's PCIe tree differ.
	TopologyFile  string         `json:"topologyFile,omitempty"`
	Disagreements []Disagreement `json:"disagreements,omitempty"`
	FlatPCI       bool           `json:"flatPCI,omitempty"`
	// PFs are the SR-IOV PFs and their VFs (a VF a pod holds in vf mode
	// is in Holders under its PCI address).
	PFs []PF `json:"pfs,omitempty"`
	// LeakedVFs are the VFs a running raild found carrying a pod's admin
	// MAC while no lease holds them, or sharing an admin MAC.
	LeakedVFs []LeakedVF `json:"leakedVFs,omitempty"`
}

// LeakedVF is a VF whose admin MAC says a pod's configuration is still on
// it while no lease holds it, or that shares its admin MAC with another VF.
type LeakedVF struct {
	PCI   string `json:"pci"`
	PF    string `json:"pf"` // the PF's netdev
	Index int    `json:"index"`
	MAC   string `json:"mac"`
	Why   string `json:"why"`
}

// Report gathers the machine's devices, every GPU/NIC class (NICs that
// cannot be used are listed too), the NICs sysfs shows to be the node's
// own, and the affinity without them.
func (m *Machine) Report() Report { return m.ReportWith(m.LinkProtection()) }

// ReportWith is Report with the protection known from elsewhere (sysfs and
// the host's addresses and routes); the affinity leaves out every NIC
// protected even in child modes.
func (m *Machine) ReportWith(protected map[string]Protection) Report {
	r := Report{
		GPUs:     nonNil(m.GPUs),
		NICs:     nonNil(m.NICs),
		Matrix:   make(map[string]map[string]Class, len(m.GPUs)),
		Affinity: map[string]string{},
		RdmaCM:   m.RdmaCM,
		Problems: m.Problems,
		Sources:  make(map[string]map[string]Source, len(m.GPUs)),
		FlatPCI:  m.FlatPCI,
		PFs:      m.PFs,
	}
	idx := m.index()
	for gi, g := range m.GPUs {
		row := make(map[string]Class, len(m.NICs))
		sources := make(map[string]Source, len(m.NICs))
		for ni, n := range m.NICs {
			row[n.Name] = idx.class[gi][ni]
			sources[n.Name] = idx.source[gi][ni]
		}
		r.Matrix[strconv.Itoa(g.Index)] = row
		r.Sources[strconv.Itoa(g.Index)] = sources
	}
	if m.TopologyFile != nil {
		r.TopologyFile = m.TopologyFile.Path
		r.Disagreements = m.disagreements()
	}
	for gpu, nic := range m.AffinityExcluding(Unplaceable(protected)) {
		r.Affinity[strconv.Itoa(gpu)] = nic
	}
	if len(protected) > 0 {
		r.Protected = protected
	}
	return r
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteText prints a report for a person: the GPU×NIC matrix with its
// legend (like `nvidia-smi topo -m`), the NIC table, the affinity and the
// problems.
func WriteText(w io.Writer, r Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	writeMatrix(tw, r)
	writeSources(tw, r)
	fmt.Fprintln(tw)
	writeNICTable(tw, r.NICs)
	fmt.Fprintln(tw)
	writeProtected(tw, r)
	writeAffinity(tw, r)
	writeHolders(tw, r.Holders)
	writePFs(tw, r)
	if len(r.Problems) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "Problems:")
		for _, p := range r.Problems {
			fmt.Fprintf(tw, "  %s:\t%s\n", p.Device, p.Reason)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write topology report: %w", err)
	}
	return nil
}

func writeMatrix(tw io.Writer, r Report) {
	header := []string{""}
	for _, n := range r.NICs {
		header = append(header, n.Name)
	}
	header = append(header, "NUMA", "PCI")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, g := range r.GPUs {
		row := []string{"GPU" + strconv.Itoa(g.Index)}
		classes := r.Matrix[strconv.Itoa(g.Index)]
		for _, n := range r.NICs {
			cell := "?"
			if c, ok := classes[n.Name]; ok {
				cell = c.String()
			}
			row = append(row, cell)
		}
		row = append(row, numaText(g.NUMA), g.PCI)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if len(r.GPUs) == 0 {
		fmt.Fprintln(tw, "(no GPUs bound to the nvidia driver)")
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "Legend:")
	for _, l := range legend {
		fmt.Fprintf(tw, "  %s\t= %s\n", l.class, l.text)
	}
}

// writeNICTable prints one row per target: a dual-port device's second
// port is its own row, named "<device>:2".
func writeNICTable(tw io.Writer, nics []NIC) {
	fmt.Fprintln(tw, "NIC\tNETDEV\tPORT\tSTATE\tLINK\tRATE\tNUMA\tPCI\tUVERBS\tUMAD")
	for _, n := range nics {
		if len(n.Ports) == 0 {
			uverbs := dash(n.UverbsName)
			if n.NetdevOnly {
				uverbs = "(no RDMA device)" // placed by its netdev: a softRoCE node's NIC
			}
			fmt.Fprintf(tw, "%s\t%s\t-\t%s\t%s\t%s\t%s\t%s\t%s\t-\n", n.Name, dash(n.Netdev),
				dash(n.State), dash(string(n.LinkLayer)), dash(n.Rate), numaText(n.NUMA), nicPCI(n), uverbs)
		}
		for _, p := range n.Ports {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, dash(strings.Join(p.Netdevs, ",")),
				p.Num, dash(p.State), dash(string(p.LinkLayer)), dash(p.Rate), numaText(n.NUMA), nicPCI(n), dash(n.UverbsName), devName(p.Umad))
		}
	}
	if len(nics) == 0 {
		fmt.Fprintln(tw, "(no NICs)")
	}
}

func devName(cd *CharDev) string {
	if cd == nil {
		return "-"
	}
	return cd.Name
}

func writeAffinity(tw io.Writer, r Report) {
	fmt.Fprintln(tw, "Affinity:")
	for _, g := range r.GPUs {
		key := strconv.Itoa(g.Index)
		nic, ok := r.Affinity[key]
		if !ok {
			fmt.Fprintf(tw, "  GPU%s\t-> (no usable NIC)\n", key)
			continue
		}
		fmt.Fprintf(tw, "  GPU%s\t-> %s\t%s\n", key, nic, r.Matrix[key][nic])
	}
}

func nicPCI(n NIC) string {
	switch {
	case n.PCI != "":
		return n.PCI
	case n.Virtual:
		return "virtual"
	}
	return "-"
}

func numaText(n int) string {
	if n < 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeHolders lists the NICs in use and the pods holding them.
func writeHolders(tw io.Writer, holders map[string]string) {
	if len(holders) == 0 {
		return
	}
	names := make([]string, 0, len(holders))
	for nic := range holders {
		names = append(names, nic)
	}
	sort.Strings(names)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "Held by pods:")
	for _, nic := range names {
		fmt.Fprintf(tw, "  %s:\t%s\n", nic, holders[nic])
	}
}

// writeProtected lists the node's own NICs, why, and what rail may do
// with each.
func writeProtected(tw io.Writer, r Report) {
	if len(r.Protected) == 0 {
		return
	}
	fmt.Fprintln(tw, "Protected (the node's own NICs):")
	for _, n := range r.NICs {
		p, ok := r.Protected[n.Name]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s: %s\n", n.Name, dash(n.Netdev), p.Use(), p.Why())
	}
	fmt.Fprintln(tw)
}
