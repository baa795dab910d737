package topology

import (
	"strconv"
)

// Distance classifies the PCIe/NUMA path between a GPU and a NIC the way
// `nvidia-smi topo -m` and NCCL do.
//
// Each device carries Root, its host bridge ("pci0000:15"), and Path, the
// bridges from the root port down to its parent. In sysfs a PCIe switch is
// two bridges: the upstream port and then one downstream port per link, so
// a GPU behind one switch has the path [root port, upstream, downstream].
// NCCL collapses each pair into one switch node (it walks up two sysfs
// levels per node) and treats the root port as part of the CPU. With c the
// number of leading bridges both paths share and below the largest number
// of bridges either device has under that common part, the rule is:
//
//   - different host bridges: NODE when both NUMA nodes are known and
//     equal, SYS otherwise (also when either location is unknown);
//   - c == 0: the paths meet only at the host bridge: PHB;
//   - below == 0: both hang off the same bridge (functions of one device or
//     siblings behind one port): PIX;
//   - c == 1: only the root port is shared, which NCCL counts as the CPU: PHB;
//   - below == 1: the common bridge is a switch's upstream port and each
//     device sits right under one of its downstream ports, one switch: PIX;
//   - otherwise the path climbs through at least one more switch on one
//     side before meeting below the root port: PXB.
//
// GPU at [RP, U1, D1, U2, D2] and NIC at [RP, U1, D1, U2, D3]: c=4, below=1,
// PIX. The same GPU and a NIC at [RP, U1, D4]: c=2, below=3, PXB.
//
// With a topology file the file's class wins for the pairs it names; a
// C2C-attached GPU (Grace) is placed by its CPU socket (P2C or SYS).
func (m *Machine) Distance(g GPU, n NIC) Class {
	c, _, _ := m.pairDistance(g, n)
	return c
}

// distance returns the class and what the path meets at: a bridge address,
// a host bridge, or the NUMA relation.
func distance(g GPU, n NIC) (Class, string) {
	if g.Root == "" || n.Root == "" {
		return SYS, "location unknown"
	}
	if g.C2C {
		return c2cDistance(g, n)
	}
	if g.Root != n.Root {
		if g.NUMA >= 0 && g.NUMA == n.NUMA {
			return NODE, "host bridges " + g.Root + " and " + n.Root + " on NUMA node " + strconv.Itoa(g.NUMA)
		}
		if g.NUMA < 0 || n.NUMA < 0 {
			return SYS, "host bridges " + g.Root + " and " + n.Root + ", NUMA node unknown"
		}
		return SYS, "across NUMA nodes " + strconv.Itoa(g.NUMA) + " and " + strconv.Itoa(n.NUMA)
	}
	c := commonPrefix(g.Path, n.Path)
	below := max(len(g.Path), len(n.Path)) - c
	switch {
	case c == 0:
		return PHB, "via host bridge " + g.Root
	case below == 0:
		return PIX, "via bridge " + g.Path[c-1]
	case c == 1:
		return PHB, "via root port " + g.Path[0] + " of host bridge " + g.Root
	case below == 1:
		return PIX, "via switch " + g.Path[c-1]
	default:
		return PXB, "via switch " + g.Path[c-1]
	}
}

// c2cDistance ranks a NIC for a GPU on a chip-to-chip link (Grace): the
// PCIe tree joins them only through the CPU, so the socket decides: P2C
// on the GPU's own socket (NCCL's GPU → C2C → CPU → PCIe → NIC), SYS
// across the link between sockets.
func c2cDistance(g GPU, n NIC) (Class, string) {
	gpuNode := "CPUs of NUMA node " + strconv.Itoa(g.CPUNode)
	switch {
	case n.CPUNode < 0:
		return SYS, "C2C to " + gpuNode + ", the NIC's socket unknown"
	case n.CPUNode == g.CPUNode:
		return P2C, "via C2C to the " + gpuNode
	}
	return SYS, "C2C to the " + gpuNode + ", the NIC on the socket of node " + strconv.Itoa(n.CPUNode)
}

func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// pairReason is the short human reason for a GPU/NIC pair:
// "PIX to GPU0 via switch 0000:16:00.0", "SYS to GPU4: across NUMA nodes 1 and 0".
func pairReason(c Class, gpu int, via string) string {
	sep := " "
	if len(via) >= 4 && via[:4] != "via " {
		sep = ": "
	}
	return c.String() + " to GPU" + strconv.Itoa(gpu) + sep + via
}
