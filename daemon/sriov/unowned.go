package sriov

import (
	"net"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/vfpf"
)

// unownedReset is one VF resetUnowned reset, with what it found.
type unownedReset struct {
	pf     string
	vf     topology.VF
	before vfpf.State
	err    error
}

// resetUnowned resets, on each PF raild owns (sriov.ownPFs), every VF in
// the host netns, bound to its network driver, whose admin MAC is set
// while no lease holds it: a pod's VF that leaked without rail's label to
// restore it from (its lease lost, or set up by another plugin). A VF in a
// pod's netns, bound to vfio-pci (a VM's) or whose reset from its label
// failed (skip) is left alone. It runs under the allocator's lock, so an
// ADD takes such a VF before or after its reset, never during it, and
// returns the holders as of then.
func (w *Sweep) resetUnowned(m *topology.Machine, holders map[string]string, skip map[vfPlace]bool) map[string]string {
	owned, _ := Config{OwnPFs: w.OwnPFs}.Owned(m)
	if len(owned) == 0 {
		return holders
	}
	var done []unownedReset
	w.Holding(func(held map[string]string) {
		holders = held
		w.AdminMACs(m, func(pf topology.PF) bool { return owned[pf.PCI] }, func(pf topology.PF, vf topology.VF, _ net.HardwareAddr) bool {
			if _, held := vf.HeldBy(holders); held || vf.Attachable() != "" || skip[vfPlace{pf.Netdev, vf.Index}] {
				return true
			}
			before, err := w.Host.ResetUnowned(pf.Netdev, vf.Index)
			done = append(done, unownedReset{pf: pf.Netdev, vf: vf, before: before, err: err})
			return true
		})
	})
	for _, r := range done {
		attrs := []any{"pf", r.pf, "vf", r.vf.Index, "pci", r.vf.PCI, "netdev", r.vf.Netdev, "mac", r.before.MAC.String(),
			"vlan", r.before.VLAN, "trust", r.before.Trust, "spoofchk", r.before.Spoofchk}
		if r.err != nil {
			w.Log.Warn("VF with an admin MAC no lease holds could not be reset on a PF raild owns", append(attrs, "error", r.err)...)
			continue
		}
		w.count(r.pf, resetUnowned)
		w.Log.Info("VF with an admin MAC no lease holds reset to a clean state on a PF raild owns (sriov.ownPFs)", attrs...)
	}
	return holders
}
