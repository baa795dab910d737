package sriov

import (
	"strings"
	"testing"
)

// TestLeasedVF: an older raild's vf-mode lease names its VF by PCI address
// (any case) or, rebuilt by `raild recover`, by the VF's RDMA device; both
// find the VF's PCI address and its PF's port. A PF's own port or an
// address that is no VF finds nothing.
func TestLeasedVF(t *testing.T) {
	_, _, m := sriovMachine(t)
	pf := m.PFs[1]
	port, ok := m.PFNIC(pf)
	if !ok {
		t.Fatalf("PF %s has no port", pf.PCI)
	}
	var withRDMA string
	for _, vf := range pf.VFs {
		if vf.RDMA != "" {
			withRDMA = vf.RDMA
			break
		}
	}
	if withRDMA == "" {
		t.Fatalf("no VF of PF %s has an RDMA device", pf.PCI)
	}
	vf := pf.VFs[0]
	tests := []struct {
		id, pci, port string
		ok            bool
	}{
		{id: vf.PCI, pci: vf.PCI, port: port.Name, ok: true},
		{id: strings.ToUpper(vf.PCI), pci: vf.PCI, port: port.Name, ok: true},
		{id: withRDMA, port: port.Name, ok: true},
		{id: port.Name},
		{id: pf.PCI},
		{id: "0000:ff:00.7"},
	}
	find := LeasedVF(m)
	for _, tt := range tests {
		pci, gotPort, ok := find(tt.id)
		if ok != tt.ok || gotPort != tt.port || (tt.pci != "" && pci != tt.pci) {
			t.Errorf("LeasedVF(%s) = %q, %q, %v; want %q, %q, %v", tt.id, pci, gotPort, ok, tt.pci, tt.port, tt.ok)
		}
		if ok {
			if got, found := m.VFByPCI(pci); !found || got.PF != pf.PCI {
				t.Errorf("LeasedVF(%s) = %s: not a VF of PF %s", tt.id, pci, pf.PCI)
			}
		}
	}
}
