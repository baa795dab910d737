package topology

// Source says where a GPU/NIC distance came from.
type Source string

const (
	SourceSysfs  Source = "sysfs"  // the PCIe tree in sysfs
	SourceFile   Source = "file"   // the NCCL topology file
	SourceSocket Source = "socket" // a C2C-attached GPU's CPU socket (Grace)
	SourceNUMA   Source = "numa"   // sysfs with no switch information: NUMA nodes only
)

// pairDistance is the class of a GPU/NIC pair with its reason and source:
// the topology file's when it names both, else sysfs's.
func (m *Machine) pairDistance(g GPU, n NIC) (Class, string, Source) {
	if m.TopologyFile != nil {
		if c, via, ok := m.TopologyFile.distance(g.PCI, n.PCI); ok {
			return c, via, SourceFile
		}
	}
	c, via := distance(g, n)
	switch {
	case g.C2C:
		return c, via, SourceSocket
	case m.FlatPCI:
		return c, via + " (" + flatReason + ")", SourceNUMA
	}
	return c, via, SourceSysfs
}
