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
		if IsPodSoftRoCE(name) {
			continue // a pod's own device, not a NIC (softroce.go)
		}
		nics = append(nics, d.nic(name, cd)...)
	}
	return nics
}

// nic reads one RDMA device: one target per port (see TargetName), or a
// single one named as the device when it shows no port; none when its
// class entry is gone.
func (d *discovery) nic(name string, cd charDevs) []NIC {
	dir := ibClassDir + "/" + name
	if !d.fs.exists(dir) {
		d.problem(name, d.linkProblem(dir, os.ErrNotExist)+"; skipped")
		return nil
	}
	n := NIC{Name: name, Device: name, NUMA: -1, CPUNode: -1}
	devDir := d.nicLocation(&n, dir)
	if guid, err := d.fs.read(dir + "/node_guid"); err == nil {
		n.NodeGUID = guid
	}
	if uv, ok := cd.verbs[name]; ok {
		n.Uverbs, n.UverbsName = uv, uv.Name
	} else {
		d.problem(name, "no uverbs device in /sys/class/infiniband_verbs (is ib_uverbs loaded?)")
	}
	ports := d.ports(&n, dir, devDir, cd)
	if len(ports) == 0 {
		n.Port, n.Bond = 1, strings.HasPrefix(name, "mlx5_bond_")
		return []NIC{n}
	}
	targets := make([]NIC, 0, len(ports))
	for _, p := range ports {
		targets = append(targets, d.target(n, p, len(ports)))
	}
	return targets
}

// target is the device's NIC for one of its ports.
func (d *discovery) target(dev NIC, p Port, ports int) NIC {
	t := dev
	t.Name, t.Port, t.Ports = TargetName(dev.Device, p.Num), p.Num, []Port{p}
	if ports > 1 {
		t.DevicePorts = ports
	}
	t.State, t.LinkLayer, t.Rate = p.State, p.LinkLayer, p.Rate
	if len(p.Netdevs) > 0 {
		t.Netdev = p.Netdevs[0]
	}
	t.Links = d.netdevLinks(t.Netdev)
	t.Bond = strings.HasPrefix(dev.Device, "mlx5_bond_") ||
		(t.Netdev != "" && d.fs.exists("/sys/class/net/"+t.Netdev+"/bonding"))
	return t
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
	n.CPUNode = d.cpuNode(d.cpus, fn, n.NUMA)
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
		n.CPUNode = d.cpuNode(d.cpus, dev, n.NUMA)
	}
}
