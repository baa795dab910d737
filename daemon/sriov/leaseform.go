package sriov

import "github.com/railcni/rail/pkg/topology"

// LeasedVF finds on m the VF a vf-mode lease of an older raild named in
// its NICs (ipam.Options.VFOf): by PCI address, as raild leased it, or by
// RDMA device, as `raild recover` rebuilt it from the pod's interface.
// It answers the VF's PCI address and the name of its PF's port (what a
// vf-mode lease holds now); false when m has no such VF or its PF no
// port to place it by.
func LeasedVF(m *topology.Machine) func(id string) (pci, port string, ok bool) {
	return func(id string) (string, string, bool) {
		pci := topology.NormalizePCI(id)
		for _, pf := range m.PFs {
			for _, vf := range pf.VFs {
				if vf.PCI != pci && (vf.RDMA == "" || vf.RDMA != id) {
					continue
				}
				nic, ok := m.PFNIC(pf)
				if !ok {
					return "", "", false
				}
				return vf.PCI, nic.Name, true
			}
		}
		return "", "", false
	}
}
