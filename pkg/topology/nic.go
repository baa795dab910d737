package topology

import (
	"errors"
	"os"
	"strings"
)

const ibClassDir = "/sys/class/infiniband"

// discoverNICs reads every RDMA device in /sys/class/infiniband, sorted by
// name in natural order (mlx5_2 before mlx5_10).
func (d *discovery) discoverNICs(cd charDevs) []NIC {
	names, err := d.fs.names(ibClassDir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.problem("rdma", why(ibClassDir, err))
		}
		return nil
	}
	sortNatural(names)
	nics := make([]NIC, 0, len(names))
	for _, name := range names {
		if n, ok := d.nic(name, cd); ok {
			nics = append(nics, n)
		}
	}
	return nics
}

// nic reads one RDMA device; ok is false when its class entry is gone.
func (d *discovery) nic(name string, cd charDevs) (NIC, bool) {
	dir := ibClassDir + "/" + name
	if !d.fs.exists(dir) {
		d.problem(name, d.linkProblem(dir, os.ErrNotExist)+"; skipped")
		return NIC{}, false
	}
	n := NIC{Name: name, NUMA: -1}
	devDir := d.nicLocation(&n, dir)
	if guid, err := d.fs.read(dir + "/node_guid"); err == nil {
		n.NodeGUID = guid
	}
	n.Ports = d.ports(&n, dir, devDir, cd)
	if len(n.Ports) > 0 {
		first := n.Ports[0]
		n.State, n.LinkLayer, n.Rate = first.State, first.LinkLayer, first.Rate
		if len(first.Netdevs) > 0 {
			n.Netdev = first.Netdevs[0]
		}
	}
	n.Bond = strings.HasPrefix(name, "mlx5_bond_") ||
		(n.Netdev != "" && d.fs.exists("/sys/class/net/"+n.Netdev+"/bonding"))
	if uv, ok := cd.verbs[name]; ok {
		n.Uverbs, n.UverbsName = uv, uv.Name
	} else {
		d.problem(name, "no uverbs device in /sys/class/infiniband_verbs (is ib_uverbs loaded?)")
	}
	return n, true
}

// nicLocation finds the PCI function behind the device (its `device` link)
// and returns its sysfs path. Software devices (rxe, siw) have no such link
// but a `parent` netdev; they are placed where that netdev's PCI function
// is, if it has one.
func (d *discovery) nicLocation(n *NIC, dir string) string {
	link := dir + "/device"
	parent, parentErr := d.fs.read(dir + "/parent")
	n.Virtual = parentErr == nil
	dev, err := d.fs.real(link)
	switch {
	case err == nil:
	case d.fs.isLink(link):
		d.problem(n.Name, d.linkProblem(link, err))
		return ""
	default:
		n.Virtual = true
		d.softLocation(n, parent)
		return ""
	}
	root, path, addr, ok := pciLocation(dev)
	if !ok {
		d.problem(n.Name, dev+" is not a PCI function")
		return ""
	}
	n.PCI, n.Root, n.Path = addr, root, path
	fn := dev
	if base := dev[strings.LastIndex(dev, "/")+1:]; base != addr {
		// An auxiliary device (an mlx5 sub-function, mlx5_core.sf.N)
		// below its PCI function: it sits where that function sits.
		fn = dev[:strings.LastIndex(dev, "/"+addr+"/")+len(addr)+1]
		n.SF, n.PF = true, addr
	}
	n.NUMA = d.numa(n.Name, fn)
	if physfn := dev + "/physfn"; d.fs.isLink(physfn) {
		pf, err := d.fs.linkName(physfn)
		if err != nil {
			d.problem(n.Name, d.linkProblem(physfn, err))
		}
		n.VF, n.PF = true, pf
	}
	return dev
}

// softLocation places a software RDMA device at its parent netdev's PCI
// function; one on a virtual netdev (veth, bridge) has no location.
func (d *discovery) softLocation(n *NIC, parent string) {
	if parent == "" {
		return
	}
	dev, err := d.fs.real("/sys/class/net/" + parent + "/device")
	if err != nil {
		return
	}
	if root, path, _, ok := pciLocation(dev); ok {
		n.Root, n.Path = root, path
		n.NUMA = d.numa(n.Name, dev)
	}
}
