package ipam

import "github.com/railcni/rail/ipam/store"

// modeVF is vf mode's wire name (api.ModeVF; ipam imports ipam/store only).
const modeVF = "vf"

// upgradeVFLeases rewrites, in leases and through ses, the vf-mode leases
// written before leases had a VF field: those named the VF in NICs. Each
// then holds its PF's port in NICs and the VF's PCI address in VF, as
// vfOf finds them on the node. A VF the node does not have keeps its
// name in VF and holds no port: the lease and its address stay until the
// pod's DEL, which finds the VF by the record rail left on it. Nothing
// else of a lease changes. Without vfOf (no node to read) nothing is
// rewritten.
func upgradeVFLeases(leases []store.Lease, vfOf func(id string) (pci, port string, ok bool), ses *store.Session) error {
	if vfOf == nil {
		return nil
	}
	for i, l := range leases {
		if l.Mode != modeVF || l.VF != "" || len(l.NICs) != 1 {
			continue
		}
		l.VF, l.NICs = l.NICs[0], nil
		if pci, port, ok := vfOf(l.VF); ok {
			l.VF, l.NICs = pci, []string{port}
		}
		if err := ses.PutLease(l); err != nil {
			return err
		}
		leases[i] = l
	}
	return nil
}
