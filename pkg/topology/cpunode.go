package topology

import (
	"strconv"
	"strings"
)

// nodeDir holds one directory per NUMA node (node0, node1, …), each with
// the CPUs it holds in cpulist; a node of device memory alone (a Grace
// GPU's HBM) has an empty cpulist.
const nodeDir = "/sys/devices/system/node"

// cpuNodes maps each NUMA node to whether it holds CPUs and the first CPU
// of each node, as read from sysfs once per discovery.
type cpuNodes struct {
	known   bool         // the node directory exists
	hasCPUs map[int]bool // node → it holds at least one CPU
	owner   map[int]int  // CPU → its node
}

// readCPUNodes reads the node directory; a machine folder without it
// (older fake machines, some containers) leaves every device's CPU node
// at its numa_node.
func (d *discovery) readCPUNodes() cpuNodes {
	c := cpuNodes{hasCPUs: map[int]bool{}, owner: map[int]int{}}
	names, err := d.fs.names(nodeDir)
	if err != nil {
		return c
	}
	c.known = true
	for _, name := range names {
		node, err := strconv.Atoi(strings.TrimPrefix(name, "node"))
		if !strings.HasPrefix(name, "node") || err != nil {
			continue
		}
		list, err := d.fs.read(nodeDir + "/" + name + "/cpulist")
		if err != nil {
			continue
		}
		cpus := parseCPUList(list)
		c.hasCPUs[node] = len(cpus) > 0
		for _, cpu := range cpus {
			c.owner[cpu] = node
		}
	}
	return c
}

// onlyNode is the machine's one NUMA node, when sysfs shows exactly one.
func (c cpuNodes) onlyNode() (int, bool) {
	if !c.known || len(c.hasCPUs) != 1 {
		return -1, false
	}
	for node := range c.hasCPUs {
		return node, true
	}
	return -1, false
}

// parseCPUList reads a kernel CPU list ("0-71", "0-3,8-11", "") into the
// CPUs it names, in order; malformed parts are skipped.
func parseCPUList(s string) []int {
	var cpus []int
	for part := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first || last-first > 1<<16 {
				continue
			}
		}
		for cpu := first; cpu <= last; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// cpuNode is the NUMA node holding the CPUs local to the PCI function at
// dev whose numa_node is numa: that node when it holds CPUs, else the
// node of the first CPU in the function's local_cpulist, else -1.
func (d *discovery) cpuNode(c cpuNodes, dev string, numa int) int {
	if !c.known {
		return numa
	}
	if numa >= 0 && c.hasCPUs[numa] {
		return numa
	}
	list, err := d.fs.read(dev + "/local_cpulist")
	if err != nil {
		return -1
	}
	cpus := parseCPUList(list)
	if len(cpus) == 0 {
		return -1
	}
	if node, ok := c.owner[cpus[0]]; ok {
		return node
	}
	return -1
}

// isC2C tells a GPU attached to its CPU by a chip-to-chip link: its
// numa_node is a node without CPUs (its own memory, as Grace exposes it)
// and its local CPUs name the socket it hangs off.
func isC2C(c cpuNodes, numa, cpuNode int) bool {
	_, exists := c.hasCPUs[numa]
	return c.known && numa >= 0 && exists && !c.hasCPUs[numa] && cpuNode >= 0
}
