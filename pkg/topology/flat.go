package topology

// flatReason is said wherever placement ranks by NUMA node alone because
// sysfs shows every device on a PCI root of its own.
const flatReason = "sysfs carries no switch information on this node: ranked by NUMA node, then spread"

// FlatPCIProblem is reported (device "PCI topology") when no topology
// file makes up for it.
const FlatPCIProblem = "sysfs carries no switch information on this node (every GPU and NIC sits alone on a PCI root " +
	"of its own, as in Hyper-V VMs): give the node's NCCL topology file (raild config topologyFile); " +
	"until then NICs are ranked by NUMA node, then spread"

// flatPCI reports whether sysfs hides the PCIe tree: at least one GPU and
// one NIC on PCI, every one of them straight on its host bridge (no root
// port or switch above it) and no host bridge holding two devices (the
// functions of one device count once).
func flatPCI(gpus []GPU, nics []NIC) bool {
	owner := map[string]string{} // root → the device (domain:bus:dev) on it
	place := func(root string, path []string, pci string) bool {
		if root == "" || len(path) > 0 {
			return false
		}
		dev := pciDevice(pci)
		if other, taken := owner[root]; taken && other != dev {
			return false
		}
		owner[root] = dev
		return true
	}
	pciNICs := 0
	for _, n := range nics {
		if n.Virtual || n.PCI == "" {
			continue
		}
		if !place(n.Root, n.Path, n.PCI) {
			return false
		}
		pciNICs++
	}
	for _, g := range gpus {
		if !place(g.Root, g.Path, g.PCI) {
			return false
		}
	}
	return len(gpus) > 0 && pciNICs > 0
}

// pciDevice drops the function from a PCI address: 0001:00:00.1 → 0001:00:00.
func pciDevice(addr string) string {
	if i := len(addr) - 2; i > 0 && addr[i] == '.' {
		return addr[:i]
	}
	return addr
}
