package inventory

import (
	"errors"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// stubProtector answers with its table, or its error.
type stubProtector struct {
	all map[string]topology.Protection
	err error
}

func (s *stubProtector) All(*topology.Machine) (map[string]topology.Protection, error) {
	return s.all, s.err
}

func (s *stubProtector) Of(nics []topology.NIC) (map[string]topology.Protection, error) {
	out := map[string]topology.Protection{}
	for _, n := range nics {
		if p, ok := s.all[n.Name]; ok {
			out[n.Name] = p
		}
	}
	return out, s.err
}

func TestSnapshotProtection(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "frontend-lag", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	inv, err := New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := inv.Protected(); len(p) != 1 || !p["mlx5_bond_0"].LAG {
		t.Fatalf("before a protector: %v, want the LAG sysfs shows", p)
	}
	route := topology.Protection{Reasons: []topology.ProtectReason{{Kind: topology.ProtectDefaultRoute, Detail: "default via 10.0.0.1"}}}
	stub := &stubProtector{all: map[string]topology.Protection{"mlx5_2": route}}
	if err := inv.SetProtector(stub); err != nil {
		t.Fatal(err)
	}
	if p := inv.Protected(); !p["mlx5_2"].Has(topology.ProtectDefaultRoute) {
		t.Fatalf("with a protector: %v, want mlx5_2's default route", p)
	}
	// A failed read keeps what was known: the node's NIC stays protected.
	stub.err = errors.New("netlink: no buffer space")
	snap, err := inv.Rescan("test")
	if err != nil {
		t.Fatal(err)
	}
	if snap.ProtectErr == nil || !snap.Protected["mlx5_2"].Has(topology.ProtectDefaultRoute) || !snap.Protected["mlx5_bond_0"].LAG {
		t.Fatalf("after a failed read: %v (error %v), want mlx5_2 and the LAG kept", snap.Protected, snap.ProtectErr)
	}
	nic, _ := snap.Machine.NICByName("mlx5_2")
	stub.err = nil
	got, err := inv.Recheck([]topology.NIC{nic})
	if err != nil || !got["mlx5_2"].Has(topology.ProtectDefaultRoute) {
		t.Fatalf("Recheck = %v, %v", got, err)
	}
}
