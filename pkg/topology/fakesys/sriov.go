package fakesys

import (
	"fmt"
	"path"
	"strconv"
)

// vfioDriver is the driver a VF is bound to when it is handed to a VM or
// a DPDK application: it then has no netdev and no RDMA device.
const vfioDriver = "vfio-pci"

// PFSpec is one SR-IOV physical function as written.
type PFSpec struct {
	PCI      string
	Netdev   string // "" when written without one
	RDMA     string // "" for a card without RDMA devices (igb)
	Driver   string
	TotalVFs int
	VFs      []VFSpec // sriov_numvfs of them, in virtfnN order
}

// VFSpec is one SR-IOV virtual function as written.
type VFSpec struct {
	Index  int // N of the PF's virtfnN
	PCI    string
	Netdev string // "" for a VF bound to vfio-pci
	RDMA   string // "" without an RDMA device (igbvf, vfio-pci)
	Driver string
}

// PF returns the written SR-IOV PF at that PCI address.
func (s *Spec) PF(pci string) (PFSpec, bool) {
	for _, pf := range s.PFs {
		if pf.PCI == pci {
			return pf, true
		}
	}
	return PFSpec{}, false
}

// pfPlan is where an SR-IOV PF sits, for writing its VFs.
type pfPlan struct {
	dir, pci, parent string
	netdev, rdma     string
	model            cardModel
	numa             int
}

// sriovFiles writes the SR-IOV attributes the kernel gives a PF (the
// first VF's routing ID is the PF's + offset, the next ones stride apart)
// and records the PF in the Spec.
func (b *builder) sriovFiles(pf pfPlan, offset, stride, total, num int) {
	b.f.file(pf.dir+"/sriov_totalvfs", strconv.Itoa(total))
	b.f.file(pf.dir+"/sriov_numvfs", strconv.Itoa(num))
	b.f.file(pf.dir+"/sriov_offset", strconv.Itoa(offset))
	b.f.file(pf.dir+"/sriov_stride", strconv.Itoa(stride))
	b.f.file(pf.dir+"/sriov_drivers_autoprobe", "1")
	b.f.file(pf.dir+"/sriov_vf_device", pf.model.vfDevice[2:])
	b.spec.PFs = append(b.spec.PFs, PFSpec{PCI: pf.pci, Netdev: pf.netdev, RDMA: pf.rdma, Driver: pf.model.driver, TotalVFs: total})
}

// virtualFunction writes VF k of pf as the kernel lays it out: a PCI
// function beside its PF under the same bridge, the physfn / virtfnN
// links, its driver and, unless bound to vfio-pci, its netdev and (on
// RDMA cards, mlx5 VFs have their own) its RDMA device.
func (b *builder) virtualFunction(pf pfPlan, vfAddr string, vf Func, k int, netdev string) {
	driver := pf.model.vfDriver
	if vf.Driver != "" {
		driver = vf.Driver
	}
	dir := b.function(pf.parent, vfAddr, pf.numa, pciID{pf.model.vendor, pf.model.vfDevice, nicClass(vf.LinkLayer), driver})
	b.f.link(dir+"/physfn", pf.dir)
	b.f.link(fmt.Sprintf("%s/virtfn%d", pf.dir, k), dir)
	spec := VFSpec{Index: k, PCI: vfAddr, Driver: driver}
	if driver != vfioDriver {
		p := b.plan(vf, dir, vfAddr, pf.numa, pf.model.vfHcaType)
		p.vf, p.netdev = true, netdev
		if p.netdev != "" {
			b.netdev(dir, p.netdev, vf.LinkLayer, 0, p.state, p.name)
		}
		spec.Netdev = p.netdev
		if pf.model.rdma && !vf.NoRDMA {
			b.rdmaDevice(p)
			spec.RDMA = vf.RDMA
		}
	}
	last := &b.spec.PFs[len(b.spec.PFs)-1]
	last.VFs = append(last.VFs, spec)
}

// SetVFs does to a written machine what writing len(vfs) to the PF's
// sriov_numvfs does to a running one: the PF's VFs (functions, links,
// netdevs, RDMA devices and their char devices) go, then the new ones are
// written at the routing IDs sriov_offset and sriov_stride give, as
// Write lays them out; each VF's netdev is its Netdev, else the PF's
// netdev name + "v<k>". It returns the VFs written.
func SetVFs(root, pf string, card string, vfs []Func) ([]VFSpec, error) {
	b := newBuilder(root, "", Options{})
	pfDir, err := b.f.real("/sys/bus/pci/devices/" + pf)
	if err != nil {
		return nil, fmt.Errorf("pf %s: %w", pf, err)
	}
	ints := map[string]int{}
	for _, name := range []string{"sriov_totalvfs", "sriov_numvfs", "sriov_offset", "sriov_stride", "numa_node"} {
		if ints[name], err = b.f.readInt(pfDir + "/" + name); err != nil {
			return nil, fmt.Errorf("pf %s: %w", pf, err)
		}
	}
	if len(vfs) > ints["sriov_totalvfs"] {
		return nil, fmt.Errorf("pf %s: %d VFs asked, sriov_totalvfs is %d", pf, len(vfs), ints["sriov_totalvfs"])
	}
	for k := range ints["sriov_numvfs"] {
		b.removeFunction(fmt.Sprintf("%s/virtfn%d", pfDir, k))
	}
	b.verbs, b.mad = b.f.nextIndex("/sys/class/infiniband_verbs", "uverbs"), b.f.nextIndex("/sys/class/infiniband_mad", "umad")
	netdev := b.f.firstName(pfDir + "/net")
	model := modelOf(card)
	rdma := ""
	if model.rdma {
		rdma = b.f.firstName(pfDir + "/infiniband")
	}
	pfAddr, ok := parseAddr(pf)
	if !ok {
		return nil, fmt.Errorf("pf %s: not a PCI address", pf)
	}
	plan := pfPlan{dir: pfDir, pci: pf, parent: path.Dir(pfDir), netdev: netdev, rdma: rdma, model: model, numa: ints["numa_node"]}
	b.spec.PFs = []PFSpec{{PCI: pf, Netdev: netdev, RDMA: rdma, Driver: model.driver, TotalVFs: ints["sriov_totalvfs"]}}
	for k, vf := range vfs {
		rid := pfAddr.rid + ints["sriov_offset"] + k*ints["sriov_stride"]
		name := vf.Netdev
		if name == "" && netdev != "" {
			name = fmt.Sprintf("%sv%d", netdev, k)
		}
		vf.Netdev = name
		b.virtualFunction(plan, fmt.Sprintf("%04x:%02x:%02x.%d", pfAddr.domain, rid>>8, (rid>>3)&0x1f, rid&7), vf, k, name)
	}
	b.f.file(pfDir+"/sriov_numvfs", strconv.Itoa(len(vfs)))
	if b.f.err != nil {
		return nil, fmt.Errorf("pf %s: %w", pf, b.f.err)
	}
	return b.spec.PFs[0].VFs, nil
}
