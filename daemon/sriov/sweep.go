package sriov

import (
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/vfpf"
)

// HostVFs is the host side of vf mode raild needs to never leak a VF
// (attach.HostVFs on a node; a fake in tests).
type HostVFs interface {
	// ResetReturned resets the VFs the kernel handed back from dead pods
	// (still labelled by rail), but those skip names.
	ResetReturned(skip func(pf string, index int) bool) ([]attach.ReturnedVF, error)
	// AdminMACs reads the admin MAC of each VF of a PF, by index.
	AdminMACs(pf string) (map[int]net.HardwareAddr, error)
	// ResetUnowned gives a VF a clean state through its PF (no admin MAC,
	// no VLAN, spoofchk on, trust off, ...) and returns what it found.
	ResetUnowned(pf string, index int) (vfpf.State, error)
}

// Sweep keeps vf mode from leaking a VF: it runs with every reconcile of
// raild's service (Run) and keeps what it found (Leaked).
type Sweep struct {
	// Host resets VFs and reads their admin MACs.
	Host HostVFs
	// OwnPFs are the PFs whose VFs only raild hands out (sriov.ownPFs):
	// a VF of theirs with an admin MAC no lease holds is reset (empty:
	// such VFs are only reported).
	OwnPFs []string
	// Machine is the node as it is now.
	Machine func() *topology.Machine
	// Holding runs fn under the allocator's lock with the pods holding
	// each NIC or VF a lease names (by PCI address as leased and
	// normalized): an ADD that takes a VF gets its lease before or after
	// fn, never during it.
	Holding func(fn func(holders map[string]string))
	// Rescan reads the node again (nil: nothing): after VFs were renamed
	// back, before any plan names their netdevs.
	Rescan func(cause string)
	// Count counts a VF reset on pf, and why (nil: not counted).
	Count func(pf, why string)
	Log   *slog.Logger

	mu     sync.Mutex
	leaked []topology.LeakedVF // what the last run found
}

// Why the sweep reset a VF (the reason label of rail_vf_resets_total).
const (
	resetReturned = "returned" // back from a pod that is gone, reset from rail's label
	resetUnowned  = "unowned"  // on an owned PF, an admin MAC no lease holds
)

// vfPlace is a VF as the sweep names it: by its PF's netdev and index.
type vfPlace struct {
	pf    string
	index int
}

// Run runs with every reconcile (start, CNI GC, the timer), after the
// leases of dead pods are released: it resets each VF that came back from
// a pod netns that died without DEL and that no lease holds; on the PFs
// raild owns (sriov.ownPFs) it resets each VF in the host that carries an
// admin MAC no lease holds; then it reports the VFs whose admin MAC is
// one rail gives (api.LeaseMAC) while no lease holds them, and VFs that
// share an admin MAC.
func (w *Sweep) Run() error {
	m := w.Machine()
	byPlace := map[vfPlace]topology.VF{}
	for _, pf := range m.PFs {
		for _, vf := range pf.VFs {
			if pf.Netdev != "" {
				byPlace[vfPlace{pf.Netdev, vf.Index}] = vf
			}
		}
	}
	var returned []attach.ReturnedVF
	var resetErr error
	var holders map[string]string
	w.Holding(func(held map[string]string) {
		holders = held
		returned, resetErr = w.Host.ResetReturned(func(pf string, index int) bool {
			vf, known := byPlace[vfPlace{pf, index}]
			if !known {
				return false // a VF the node no longer lists cannot be held
			}
			_, held := vf.HeldBy(holders)
			return held
		})
	})
	reset := 0
	failed := map[vfPlace]bool{}
	for _, r := range returned {
		attrs := []any{"pf", r.PF, "vf", r.Index, "netdev", r.Netdev, "host", r.Host, "sandbox", r.Owner.Sandbox}
		if r.Err != nil {
			failed[vfPlace{r.PF, r.Index}] = true
			w.Log.Warn("VF back from a pod that is gone could not be reset; it stays out of placement until it is", append(attrs, "error", r.Err)...)
			continue
		}
		reset++
		w.count(r.PF, resetReturned)
		w.Log.Info("VF back from a pod that is gone reset to its settings from before the pod", attrs...)
	}
	if reset > 0 && w.Rescan != nil {
		// Their netdevs have their host names again: plans must name those
		// (at start the link events that say so may come before raild
		// follows them).
		w.Rescan("VFs reset after their pods were gone")
		m = w.Machine()
	}
	holders = w.resetUnowned(m, holders, failed)
	w.setLeaked(w.findLeaked(m, holders))
	if resetErr != nil {
		return fmt.Errorf("reset VFs back from dead pods: %w", resetErr)
	}
	return nil
}

// findLeaked reads each PF's VFs' admin MACs.
func (w *Sweep) findLeaked(m *topology.Machine, holders map[string]string) []topology.LeakedVF {
	var out []topology.LeakedVF
	seen := map[string]topology.LeakedVF{} // admin MAC -> first VF carrying it
	w.AdminMACs(m, nil, func(pf topology.PF, vf topology.VF, mac net.HardwareAddr) bool {
		v := topology.LeakedVF{PCI: vf.PCI, PF: pf.Netdev, Index: vf.Index, MAC: mac.String()}
		if first, twice := seen[v.MAC]; twice {
			v.Why = fmt.Sprintf("admin MAC %s is also VF %d of %s's (%s)", v.MAC, first.Index, first.PF, first.PCI)
			out = append(out, v)
		} else {
			seen[v.MAC] = v
		}
		if _, held := vf.HeldBy(holders); !held && api.IsLeaseMAC(mac) {
			v.Why = fmt.Sprintf("admin MAC %s is one rail gives a lease, but no lease holds the VF", v.MAC)
			out = append(out, v)
		}
		return true
	})
	return out
}

// AdminMACs calls fn with each VF that carries an admin MAC, on the
// PFs of m with a netdev that only selects (nil: all), as their PFs
// report them; fn returning false stops. A PF whose VFs cannot be read is
// logged and passed over.
func (w *Sweep) AdminMACs(m *topology.Machine, only func(topology.PF) bool, fn func(topology.PF, topology.VF, net.HardwareAddr) bool) {
	for _, pf := range m.PFs {
		if pf.Netdev == "" || len(pf.VFs) == 0 || (only != nil && !only(pf)) {
			continue
		}
		macs, err := w.Host.AdminMACs(pf.Netdev)
		if err != nil {
			w.Log.Warn("cannot read the VFs' admin MACs", "pf", pf.Netdev, "error", err)
			continue
		}
		for _, vf := range pf.VFs {
			if mac := macs[vf.Index]; len(mac) > 0 && !isZeroMAC(mac) && !fn(pf, vf, mac) {
				return
			}
		}
	}
}

func isZeroMAC(mac net.HardwareAddr) bool {
	return !slices.ContainsFunc(mac, func(b byte) bool { return b != 0 })
}

// setLeaked keeps the sweep's finding for metrics, raild topo and
// doctor, and logs each VF found leaked that was not before.
func (w *Sweep) setLeaked(leaked []topology.LeakedVF) {
	w.mu.Lock()
	before := w.leaked
	w.leaked = leaked
	w.mu.Unlock()
	for _, v := range leaked {
		if !slices.Contains(before, v) {
			w.Log.Warn("VF carries a pod's admin MAC that no lease owns", "pci", v.PCI, "pf", v.PF, "vf", v.Index, "mac", v.MAC, "why", v.Why)
		}
	}
}

// Leaked is what the last run found (see Run).
func (w *Sweep) Leaked() []topology.LeakedVF {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.leaked)
}

// count counts a VF the sweep reset.
func (w *Sweep) count(pf, why string) {
	if w.Count != nil {
		w.Count(pf, why)
	}
}
