package topology

import (
	"errors"
	"os"
	"slices"
)

// discovery collects what one Discover call finds and what went wrong.
type discovery struct {
	fs       *fsys
	cpus     cpuNodes
	problems []Problem
}

func (d *discovery) problem(device, reason string) {
	d.problems = append(d.problems, Problem{Device: device, Reason: reason})
}

// linkProblem words a failure to follow p, naming dangling links as such.
func (d *discovery) linkProblem(p string, err error) string {
	if errors.Is(err, os.ErrNotExist) && d.fs.isLink(p) {
		return p + " is a dangling link"
	}
	return why(p, err)
}

// Options are what discovery takes besides the root.
type Options struct {
	// TopologyFile, when set, gives the distances of the GPU/NIC pairs it
	// names (an NCCL topology file, see ReadTopoFile); every PCI device it
	// names must exist below the root.
	TopologyFile *TopoFile
	// NetdevNICs also places the Ethernet PCI functions without an RDMA
	// device, by their netdevs (a softRoCE node: netdevnic.go).
	NetdevNICs bool
}

// Discover reads the machine below root ("/" for this host): GPUs bound to
// the nvidia driver, RDMA devices with their ports, netdevs and char
// devices, and where each sits in the PCIe tree. Odd or broken entries do
// not fail discovery: they are reported with what is known, or skipped,
// and listed in Problems. It fails only when root holds no sys directory.
// The Machine it returns is read-only: selection indexes are built here.
func Discover(root string) (*Machine, error) { return DiscoverWith(root, Options{}) }

// DiscoverFile is DiscoverWith with the NCCL topology file at path (""
// for none), read first into opt.
func DiscoverFile(root, path string, opt Options) (*Machine, error) {
	if path != "" {
		t, err := ReadTopoFile(path)
		if err != nil {
			return nil, err
		}
		opt.TopologyFile = t
	}
	return DiscoverWith(root, opt)
}

// DiscoverWith is Discover with options. With a topology file it fails
// when the file names a GPU or NIC the machine does not have.
func DiscoverWith(root string, opt Options) (*Machine, error) {
	fs, err := newFsys(root)
	if err != nil {
		return nil, err
	}
	d := &discovery{fs: fs}
	d.cpus = d.readCPUNodes()
	m := &Machine{Root: root, TopologyFile: opt.TopologyFile, NetdevNICs: opt.NetdevNICs}
	m.GPUs = d.discoverGPUs()
	m.NICs = d.discoverNICs(d.scanCharDevs())
	if opt.NetdevNICs {
		m.NICs = append(m.NICs, d.discoverNetdevNICs(m.NICs)...)
		slices.SortStableFunc(m.NICs, func(a, b NIC) int { return naturalCompare(deviceOf(a), deviceOf(b)) })
	}
	m.PFs = d.discoverPFs()
	m.RdmaCM = d.rdmaCM(len(m.NICs) > 0)
	if err := d.checkTopoFile(opt.TopologyFile, m); err != nil {
		return nil, err
	}
	m.FlatPCI = flatPCI(m.GPUs, m.NICs)
	if m.FlatPCI && m.TopologyFile == nil {
		d.problem("PCI topology", FlatPCIProblem)
	}
	m.Problems = d.problems
	m.idx = m.newIndex()
	return m, nil
}

// index holds what selection needs, computed once per machine.
type index struct {
	class  [][]Class  // [gpu position][nic position]
	reason [][]string // "PIX to GPU0 via switch 0000:16:00.0"
	source [][]Source // where each class came from
	order  [][]int    // per GPU: NIC positions by class, then name
	rank   []int      // per NIC: position in natural name order
	gpuPos map[int]int
}

func (m *Machine) newIndex() *index {
	gpus, nics := m.GPUs, m.NICs
	idx := &index{
		class:  make([][]Class, len(gpus)),
		reason: make([][]string, len(gpus)),
		source: make([][]Source, len(gpus)),
		order:  make([][]int, len(gpus)),
		rank:   make([]int, len(nics)),
		gpuPos: make(map[int]int, len(gpus)),
	}
	byName := make([]int, len(nics))
	for i := range nics {
		byName[i] = i
	}
	sortNaturalBy(byName, func(i int) string { return nics[i].Name })
	for r, i := range byName {
		idx.rank[i] = r
	}
	for gi, g := range gpus {
		idx.gpuPos[g.Index] = gi
		idx.class[gi] = make([]Class, len(nics))
		idx.reason[gi] = make([]string, len(nics))
		idx.source[gi] = make([]Source, len(nics))
		for ni, n := range nics {
			c, via, src := m.pairDistance(g, n)
			idx.class[gi][ni] = c
			idx.reason[gi][ni] = pairReason(c, g.Index, via)
			idx.source[gi][ni] = src
		}
		order := make([]int, len(nics))
		copy(order, byName)
		classes := idx.class[gi]
		sortStableBy(order, func(a, b int) bool { return classes[a] < classes[b] })
		idx.order[gi] = order
	}
	return idx
}

// index returns the machine's selection index, building a private one for
// a Machine assembled by hand.
func (m *Machine) index() *index {
	if m.idx != nil {
		return m.idx
	}
	return m.newIndex()
}
