package placement

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// In vf mode a pod gets SR-IOV VFs: each of its GPUs chooses the closest
// PF that has a free VF, as other modes choose NICs (the PF's NIC gives
// the distance, port state and link layer; selectors, pools and bounds
// name PFs by it), and the pod takes a free VF of each chosen PF. A lease
// holds the PF's port as its NIC and the VF by its PCI address (what a
// NAD's deviceID names) in a field of its own (Holder.VF).

// VFPick is one VF a pod gets in vf mode.
type VFPick struct {
	VF     topology.VF
	PF     topology.NIC // the NIC standing for the VF's PF
	GPUs   []int        // the GPUs that chose its PF (and share this VF)
	Class  topology.Class
	Reason string
}

// vfPF is a PF that can serve vf mode, with its use now.
type vfPF struct {
	pf   topology.PF
	nic  topology.NIC
	free []topology.VF // by index
	held int           // VFs held by pods
}

// ChooseVFs picks the VFs of vf mode for in, given who uses which NIC and
// VF now: for each GPU the closest PF with a free VF (port ACTIVE, the
// right link layer, the selector, the bounds), PFs equally close spread by
// how many of their VFs are held; GPUs that chose one PF share one VF of
// it unless in.VFPerGPU. A VF is free when no lease holds it (in vf mode
// by its PCI address, in any mode by its RDMA device), it is bound to its
// driver with its netdev on the host (not vfio-pci), and its RDMA device
// is not the node's own.
func (n *Node) ChooseVFs(in Input, use Use) ([]VFPick, error) {
	if in.Mode != api.ModeVF {
		return nil, fmt.Errorf("ChooseVFs is for mode vf, not %s", in.Mode)
	}
	pinned, in := n.pinnedVFs(in)
	linkLayer, allowed, err := n.admit(in)
	if err != nil {
		return nil, err
	}
	pfs, req, err := n.vfRequest(in, use, allowed, linkLayer, pinned)
	if err != nil {
		return nil, err
	}
	// Select among the PFs' NICs alone: reasons and bounds then name PFs.
	nics := make([]topology.NIC, 0, len(req.NICs))
	for _, name := range req.NICs {
		nics = append(nics, pfs[name].nic)
	}
	onlyPFs := *n
	onlyPFs.Machine = n.Machine.WithNICs(nics, nil)
	picks, err := onlyPFs.assignVFs(in, req, pfs)
	if err != nil {
		return nil, heldVFsMayFree(pfs, err)
	}
	if err := onlyPFs.checkBounds(in, req, pfsOf(picks)); err != nil {
		return nil, heldVFsMayFree(pfs, err)
	}
	if in.MaxNICs > 0 && len(picks) > in.MaxNICs {
		picks = picks[:in.MaxNICs]
	}
	return picks, nil
}

// pinnedVFs splits the selector of in: the device and the names that are
// VF PCI addresses (a NAD's deviceID: the VF the SR-IOV device plugin
// allocated) pin those VFs, which the pod then gets or nothing; the rest select PFs.
// nil when the selector names no VF.
func (n *Node) pinnedVFs(in Input) (map[string]bool, Input) {
	var pinned map[string]bool
	var rest []string
	for _, id := range in.NICs {
		if vf, ok := n.Machine.VFByPCI(id); ok {
			if pinned == nil {
				pinned = map[string]bool{}
			}
			pinned[vf.PCI] = true
			continue
		}
		rest = append(rest, id)
	}
	if vf, ok := n.Machine.VFByPCI(in.Device); ok {
		if pinned == nil {
			pinned = map[string]bool{}
		}
		pinned[vf.PCI] = true
		in.Device = ""
	}
	if pinned != nil {
		in.NICs = rest
	}
	return pinned, in
}

// pinnedWhy says why the pinned VFs of pf cannot be attached.
func pinnedWhy(pf topology.PF, pinned map[string]bool) string {
	var whys []string
	for _, vf := range pf.VFs {
		if pinned[vf.PCI] {
			why := vf.Attachable()
			if why == "" {
				why = "its RDMA device is the node's own"
			}
			whys = append(whys, vf.PCI+" "+why)
		}
	}
	return strings.Join(whys, "; ")
}

// ErrVFsHeld marks a vf-mode placement that found no VF while some PF it
// may use has all its attachable VFs held by pods: one may free up, so
// the runtime should try again later (CNI code 11), unlike a node whose
// PFs have no VF for the pod at all.
var ErrVFsHeld = errors.New("VFs held by other pods may free up")

// heldVFsMayFree marks err with ErrVFsHeld when a candidate PF lacks a
// free VF only because pods hold them.
func heldVFsMayFree(pfs map[string]*vfPF, err error) error {
	for _, p := range pfs {
		if p.held > 0 && len(p.free) == 0 && p.pf.NumVFs > 0 {
			return fmt.Errorf("%w: %w", err, ErrVFsHeld)
		}
	}
	return err
}

// vfRequest builds the selection over the PFs' NICs: every PF with a NIC
// is a candidate (allowed by the selector when one is given), a PF
// without a free VF or moved into a pod is excluded with why, and each
// PF's load is its VFs held.
func (n *Node) vfRequest(in Input, use Use, allowed []string, linkLayer topology.LinkLayer, pinned map[string]bool) (map[string]*vfPF, topology.Request, error) {
	held, moved := heldVFs(n.Machine, use)
	protected := n.protection()
	pfs := map[string]*vfPF{}
	req := topology.Request{GPUs: in.GPUs, LinkLayer: linkLayer, Exclude: map[string]string{}, Load: map[string]int{}}
	var without []string
	for _, pf := range n.Machine.PFs {
		nic, ok := n.Machine.PFNIC(pf)
		if !ok {
			without = append(without, pf.PCI)
			continue
		}
		if allowed != nil && !slices.Contains(allowed, nic.Name) {
			continue
		}
		if pinned != nil && !slices.ContainsFunc(pf.VFs, func(vf topology.VF) bool { return pinned[vf.PCI] }) {
			continue
		}
		p := &vfPF{pf: pf, nic: nic}
		var busy []string
		for _, vf := range pf.VFs {
			switch pod, isHeld := held[vf.PCI]; {
			case pinned != nil && !pinned[vf.PCI]:
			case isHeld:
				p.held++
				busy = appendOnce(busy, pod)
			case vf.Attachable() != "":
			case vfProtected(vf, protected):
			default:
				p.free = append(p.free, vf)
			}
		}
		pfs[nic.Name] = p
		req.NICs = append(req.NICs, nic.Name)
		req.Load[nic.Name] = p.held
		switch pod, isMoved := moved[nic.Name]; {
		case isMoved:
			req.Exclude[nic.Name] = fmt.Sprintf("PF %s is itself inside pod %s", pf.PCI, pod)
		case pf.NumVFs == 0:
			req.Exclude[nic.Name] = fmt.Sprintf("PF %s has no VFs (sriov_numvfs 0 of %d)", pf.PCI, pf.TotalVFs)
		case len(p.free) == 0 && pinned != nil && p.held == 0:
			req.Exclude[nic.Name] = fmt.Sprintf("the VF the kubelet allocated on PF %s cannot be attached: %s", pf.PCI, pinnedWhy(pf, pinned))
		case len(p.free) == 0:
			req.Exclude[nic.Name] = fmt.Sprintf("no free VF on PF %s (%d VFs, %d held by %s, the rest not attachable)",
				pf.PCI, len(pf.VFs), p.held, orNone(busy))
		}
	}
	if len(pfs) == 0 && pinned != nil {
		return nil, req, fmt.Errorf("no PF for mode vf: the PF of the VF the kubelet allocated (%s) has no RDMA device to place it by, or the selector excludes it",
			strings.Join(slices.Sorted(maps.Keys(pinned)), ", "))
	}
	if len(pfs) == 0 {
		why := "this node has no SR-IOV PF"
		switch {
		case len(without) > 0:
			why = fmt.Sprintf("its SR-IOV PFs (%s) have no RDMA device to place them by", strings.Join(without, ", "))
		case allowed != nil && len(n.Machine.PFs) > 0:
			why = fmt.Sprintf("the selector (%s) names no SR-IOV PF's NIC", strings.Join(allowed, ", "))
		}
		return nil, req, fmt.Errorf("no PF for mode vf: %s", why)
	}
	return pfs, req, nil
}

// assignVFs selects PFs for the GPUs and takes free VFs of them: one per
// PF chosen, or one per GPU with in.VFPerGPU (GPUs a PF has no VF left
// for choose again without it).
func (n *Node) assignVFs(in Input, req topology.Request, pfs map[string]*vfPF) ([]VFPick, error) {
	var picks []VFPick
	taken := map[string]int{} // PF NIC -> VFs this pod took
	for {
		choices, err := n.Machine.Select(req)
		if err != nil {
			return nil, fmt.Errorf("no usable PF for mode vf: %w", err)
		}
		var again []int
		for _, g := range groupByNIC(n.Machine, choices) {
			p := pfs[g.NIC.Name]
			groups := [][]int{g.GPUs}
			if in.VFPerGPU && len(g.GPUs) > 1 {
				groups = make([][]int, len(g.GPUs))
				for i, gpu := range g.GPUs {
					groups[i] = []int{gpu}
				}
			}
			for _, gpus := range groups {
				if taken[g.NIC.Name] == len(p.free) {
					again = append(again, gpus...)
					continue
				}
				vf := p.free[taken[g.NIC.Name]]
				taken[g.NIC.Name]++
				class := g.Class
				if len(groups) > 1 {
					class = n.gpuClass(gpus[0], p.nic)
				}
				picks = append(picks, VFPick{VF: vf, PF: p.nic, GPUs: gpus, Class: class, Reason: g.Reason})
			}
			if taken[g.NIC.Name] == len(p.free) {
				req.Exclude[g.NIC.Name] = fmt.Sprintf("its free VFs (%d) taken by this pod's other GPUs", len(p.free))
			}
			req.Load[g.NIC.Name] = p.held + taken[g.NIC.Name]
		}
		if len(again) == 0 {
			return picks, nil
		}
		req.GPUs = again
	}
}

// heldVFs reads use once: the pod holding each VF (by PCI address, also
// a VF held by its RDMA device in another mode) and the pod each NIC
// moved in an exclusive mode sits in.
func heldVFs(m *topology.Machine, use Use) (held map[string]string, moved map[string]string) {
	held, moved = map[string]string{}, map[string]string{}
	byRDMA := map[string]string{}
	for _, pf := range m.PFs {
		for _, vf := range pf.VFs {
			if vf.RDMA != "" {
				byRDMA[vf.RDMA] = vf.PCI
			}
		}
	}
	use.Range(func(nic string, h Holder) {
		switch pci, ok := byRDMA[nic]; {
		case h.VF != "":
			held[topology.NormalizePCI(h.VF)] = h.Pod() // its PF's port stays on the host
			return
		case ok:
			held[pci] = h.Pod()
		}
		if h.Mode.Exclusive() {
			moved[nic] = h.Pod()
		}
	})
	return held, moved
}

// excludeVFHolders keeps the other modes off what vf mode holds: a VF's
// own RDMA device (a NIC of its own to move mode) and, for an exclusive
// mode, a PF whose VFs pods hold (moving the PF would take their VFs'
// PF-side settings with it).
func excludeVFHolders(m *topology.Machine, exclude map[string]string, use Use, mode api.Mode) {
	held := map[string]string{}
	use.Range(func(_ string, h Holder) {
		if h.VF != "" {
			held[topology.NormalizePCI(h.VF)] = h.Pod()
		}
	})
	if len(held) == 0 {
		return
	}
	for _, pf := range m.PFs {
		var pods []string
		for _, vf := range pf.VFs {
			pod, ok := held[vf.PCI]
			if !ok {
				continue
			}
			pods = appendOnce(pods, pod)
			if _, already := exclude[vf.RDMA]; vf.RDMA != "" && !already {
				exclude[vf.RDMA] = fmt.Sprintf("VF %s held in vf mode by pod %s", vf.PCI, pod)
			}
		}
		if nic, ok := m.PFNIC(pf); ok && len(pods) > 0 && mode.Exclusive() {
			if _, already := exclude[nic.Name]; !already {
				exclude[nic.Name] = fmt.Sprintf("PF of VFs held in vf mode by %s", strings.Join(pods, ", "))
			}
		}
	}
}

// vfProtected says whether a VF's RDMA device is the node's own (its
// netdev carries the host's addresses or routes, or is enslaved).
func vfProtected(vf topology.VF, protected map[string]topology.Protection) bool {
	p, ok := protected[vf.RDMA]
	return ok && vf.RDMA != "" && p.Refusal(true) != ""
}

// pfsOf is the picks as the bounds check sees them: each PF's NIC with
// the GPUs that chose it.
func pfsOf(picks []VFPick) []Pick {
	out := make([]Pick, len(picks))
	for i, p := range picks {
		out[i] = Pick{NIC: p.PF, GPUs: p.GPUs, Class: p.Class, Reason: p.Reason}
	}
	return out
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func orNone(pods []string) string {
	if len(pods) == 0 {
		return "no pod"
	}
	return strings.Join(pods, ", ")
}
