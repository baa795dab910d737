package topology

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
)

// VFIODriver is the driver of a VF handed to a VM or a DPDK application:
// such a VF has no netdev and no RDMA device, and is not for vf mode.
const VFIODriver = "vfio-pci"

// PF is an SR-IOV physical function: a PCI function with sriov_totalvfs.
// Its VFs are PCI functions of their own beside it, each placed where the
// PF is (a VF's distance to a GPU is its PF's).
type PF struct {
	PCI      string `json:"pci"`
	Driver   string `json:"driver,omitempty"`
	Netdev   string `json:"netdev,omitempty"` // "" when it has none on the host
	TotalVFs int    `json:"totalVFs"`         // sriov_totalvfs
	NumVFs   int    `json:"numVFs"`           // sriov_numvfs: how many are enabled
	VFs      []VF   `json:"vfs,omitempty"`    // by index
}

// VF is one SR-IOV virtual function (the PF's virtfn<Index>).
type VF struct {
	Index  int    `json:"index"`
	PCI    string `json:"pci"`
	PF     string `json:"pf"`               // the PF's PCI address
	Netdev string `json:"netdev,omitempty"` // "" bound to vfio-pci, without a driver, or in a pod's netns
	RDMA   string `json:"rdma,omitempty"`   // its own RDMA device (mlx5 VFs), "" without one
	Driver string `json:"driver,omitempty"` // mlx5_core, igbvf, vfio-pci; "" unbound
}

// Attachable says why a VF cannot be given to a pod as it is on the host
// now ("" when it can): bound to vfio-pci, unbound, or without a netdev.
func (v VF) Attachable() string {
	switch {
	case v.Driver == VFIODriver:
		return "bound to vfio-pci (for a VM or DPDK, not a netdev)"
	case v.Driver == "":
		return "bound to no driver"
	case v.Netdev == "":
		return "no netdev on the host"
	}
	return ""
}

// HeldBy names the pods holding the VF among holders (NIC name or VF
// PCI address -> pods, as leases name them): in vf mode a lease holds the
// VF by its PCI address, in another mode by its RDMA device.
func (v VF) HeldBy(holders map[string]string) (string, bool) {
	if pods, ok := holders[v.PCI]; ok {
		return pods, true
	}
	if v.RDMA == "" {
		return "", false
	}
	pods, ok := holders[v.RDMA]
	return pods, ok
}

const pciDevicesDir = "/sys/bus/pci/devices"

// discoverPFs reads every SR-IOV PF below /sys/bus/pci/devices, in PCI
// order (the directory's: canonical addresses sort as they read).
func (d *discovery) discoverPFs() []PF {
	names, err := d.fs.names(pciDevicesDir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.problem("sriov", why(pciDevicesDir, err))
		}
		return nil
	}
	var pfs []PF
	for _, name := range names {
		if pf, ok := d.pf(name); ok {
			pfs = append(pfs, pf)
		}
	}
	return pfs
}

// pf reads one PCI function as an SR-IOV PF; false when it is none (no
// sriov_totalvfs, or gone).
func (d *discovery) pf(pci string) (PF, bool) {
	dir := pciDevicesDir + "/" + pci
	total, err := d.fs.readInt(dir + "/sriov_totalvfs")
	if err != nil {
		return PF{}, false // no SR-IOV capability (most functions), or gone
	}
	pf := PF{PCI: pci, TotalVFs: total, Driver: d.driver(dir), Netdev: d.firstEntry(dir + "/net")}
	if pf.NumVFs, err = d.fs.readInt(dir + "/sriov_numvfs"); err != nil {
		d.problem(pci, why(dir+"/sriov_numvfs", err))
	}
	links, _ := d.fs.names(dir)
	for _, link := range links {
		k, ok := strings.CutPrefix(link, "virtfn")
		index, err := strconv.Atoi(k)
		if !ok || err != nil {
			continue
		}
		vf, err := d.fs.linkName(dir + "/" + link)
		if err != nil {
			d.problem(pci, d.linkProblem(dir+"/"+link, err))
			continue
		}
		pf.VFs = append(pf.VFs, d.vf(pci, index, vf))
	}
	slices.SortFunc(pf.VFs, func(a, b VF) int { return a.Index - b.Index })
	return pf, true
}

// vf reads one VF's PCI function: its driver, netdev and RDMA device.
func (d *discovery) vf(pf string, index int, pci string) VF {
	dir := pciDevicesDir + "/" + pci
	return VF{Index: index, PCI: pci, PF: pf, Driver: d.driver(dir),
		Netdev: d.firstEntry(dir + "/net"), RDMA: d.firstEntry(dir + "/infiniband")}
}

// driver is the name of the driver a PCI function is bound to ("" none).
func (d *discovery) driver(dir string) string {
	name, err := d.fs.linkName(dir + "/driver")
	if err != nil {
		return ""
	}
	return name
}

// firstEntry is a directory's first entry in natural order ("" when it is
// empty or absent): a function's netdev, its RDMA device.
func (d *discovery) firstEntry(dir string) string {
	names, err := d.fs.names(dir)
	if err != nil || len(names) == 0 {
		return ""
	}
	sortNatural(names)
	return names[0]
}

// PFByPCI returns the SR-IOV PF at that PCI address.
func (m *Machine) PFByPCI(pci string) (PF, bool) {
	pci = normalizePCI(pci)
	for _, pf := range m.PFs {
		if pf.PCI == pci {
			return pf, true
		}
	}
	return PF{}, false
}

// VFByPCI returns the VF at that PCI address.
func (m *Machine) VFByPCI(pci string) (VF, bool) {
	pci = normalizePCI(pci)
	for _, pf := range m.PFs {
		for _, vf := range pf.VFs {
			if vf.PCI == pci {
				return vf, true
			}
		}
	}
	return VF{}, false
}

// PFNIC is the NIC (port 1 of an RDMA device) that stands for a PF in
// placement: its port state, link layer and distances. It is the PF's own
// RDMA device (mlx5), else a software one on its netdev (rxe on an igb
// PF, as the SR-IOV rig runs). false when the PF has none.
func (m *Machine) PFNIC(pf PF) (NIC, bool) {
	for _, n := range m.NICs {
		if n.Port > 1 || n.Bond {
			continue
		}
		if (!n.Virtual && n.PCI == pf.PCI && !n.VF && !n.SF) || (n.Virtual && pf.Netdev != "" && n.Netdev == pf.Netdev) {
			return n, true
		}
	}
	return NIC{}, false
}

// DiscoverPF reads one PCI function again as an SR-IOV PF: its VFs now;
// false when it is gone or no SR-IOV PF.
func (s *Sysfs) DiscoverPF(pci string) (PF, []Problem, bool) {
	if !validName(pci) {
		return PF{}, nil, false
	}
	d := &discovery{fs: s.fs, cpus: s.cpus}
	pf, ok := d.pf(pci)
	return pf, d.problems, ok
}

// DiscoverVFs reads again only these VFs (PCI addresses) of pf, as last
// read: a VF's netdev moved into a pod or back, or its driver changed,
// changes nothing else of the PF. It returns pf with those VFs as they are
// now, and false when the PF must be read whole (DiscoverPF): its
// sriov_numvfs changed, or a VF is not pf's or its function is gone.
func (s *Sysfs) DiscoverVFs(pf PF, vfs []string) (PF, bool) {
	d := &discovery{fs: s.fs, cpus: s.cpus}
	dir := pciDevicesDir + "/" + pf.PCI
	if n, err := d.fs.readInt(dir + "/sriov_numvfs"); err != nil || n != pf.NumVFs {
		return PF{}, false
	}
	out := pf
	out.VFs = slices.Clone(pf.VFs)
	for _, pci := range vfs {
		i := slices.IndexFunc(out.VFs, func(v VF) bool { return v.PCI == pci })
		if i < 0 || !validName(pci) {
			return PF{}, false
		}
		if back, err := d.fs.linkName(pciDevicesDir + "/" + pci + "/physfn"); err != nil || back != pf.PCI {
			return PF{}, false // the function is gone (or is no longer this PF's VF)
		}
		out.VFs[i] = d.vf(pf.PCI, out.VFs[i].Index, pci)
	}
	return out, true
}

// NetdevPF is the SR-IOV PF a host netdev's PCI function is a VF of
// (its physfn), "" for a netdev that is no VF's.
func (s *Sysfs) NetdevPF(netdev string) string {
	if !validName(netdev) {
		return ""
	}
	pf, err := s.fs.linkName("/sys/class/net/" + netdev + "/device/physfn")
	if err != nil {
		return ""
	}
	return pf
}

// WithPF is a copy of the machine with one PF replaced by what DiscoverPF
// read (present false: the PF is gone) and its problems with it, in PCI
// order. The machine itself is not changed.
func (m *Machine) WithPF(pf PF, present bool, problems []Problem) *Machine {
	pfs := slices.DeleteFunc(slices.Clone(m.PFs), func(p PF) bool { return p.PCI == pf.PCI })
	if present {
		i, _ := slices.BinarySearchFunc(pfs, pf.PCI, func(p PF, pci string) int { return pciCompare(p.PCI, pci) })
		pfs = slices.Insert(pfs, i, pf)
	}
	probs := slices.DeleteFunc(slices.Clone(m.Problems), func(p Problem) bool { return p.Device == pf.PCI })
	next := m.WithNICs(m.NICs, append(probs, problems...))
	next.PFs = pfs
	return next
}
