package fakesys

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// nodes writes /sys/devices/system/node/nodeN/cpulist for each NUMA node
// and remembers the CPU lists for the PCI functions' local_cpulist.
func (b *builder) nodes(nodes []NUMANode) {
	if len(nodes) == 0 {
		return
	}
	b.nodeCPUs = map[int]string{}
	b.spec.Nodes = len(nodes)
	var all []string
	for i, n := range nodes {
		b.f.file("/sys/devices/system/node/node"+strconv.Itoa(i)+"/cpulist", n.CPUs)
		if n.CPUs != "" {
			b.nodeCPUs[i] = n.CPUs
			all = append(all, n.CPUs)
		}
	}
	b.allCPUs = strings.Join(all, ",")
}

// vmbusGUID is a stable VMBus instance id for a root, as Hyper-V names
// the device that carries one passed-through PCI function.
func (b *builder) vmbusGUID(r Root) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%04x", b.name, r.Domain)
	x := h.Sum64()
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(x>>32), r.Domain, uint16(x>>16), uint16(x), x&0xffffffffffff)
}
