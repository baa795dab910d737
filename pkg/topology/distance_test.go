package topology

import (
	"testing"
)

func TestDistanceRule(t *testing.T) {
	const rp, u1, d1, u2, d2 = "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:00.0"
	const d3, d4, rp2 = "0000:04:01.0", "0000:02:01.0", "0000:00:02.0"
	gpu := func(root string, numa int, path ...string) GPU { return GPU{Root: root, NUMA: numa, Path: path} }
	nic := func(root string, numa int, path ...string) NIC { return NIC{Root: root, NUMA: numa, Path: path} }
	tests := []struct {
		name string
		g    GPU
		n    NIC
		want Class
		via  string
	}{
		{"one switch", gpu("pci0000:00", 0, rp, u1, d1), nic("pci0000:00", 0, rp, u1, d4), PIX, "via switch " + u1},
		{"lower switch of two levels", gpu("pci0000:00", 0, rp, u1, d1, u2, d2), nic("pci0000:00", 0, rp, u1, d1, u2, d3), PIX, "via switch " + u2},
		{"same parent bridge", gpu("pci0000:00", 0, rp, u1, d1), nic("pci0000:00", 0, rp, u1, d1), PIX, "via bridge " + d1},
		{"two switch levels", gpu("pci0000:00", 0, rp, u1, d1, u2, d2), nic("pci0000:00", 0, rp, u1, d4), PXB, "via switch " + u1},
		{"two switches each side", gpu("pci0000:00", 0, rp, u1, d1, u2, d2), nic("pci0000:00", 0, rp, u1, d4, "0000:05:00.0", "0000:06:00.0"), PXB, "via switch " + u1},
		{"only root port shared", gpu("pci0000:00", 0, rp, u1, d1), nic("pci0000:00", 0, rp), PHB, "via root port " + rp + " of host bridge pci0000:00"},
		{"different root ports", gpu("pci0000:00", 0, rp, u1, d1), nic("pci0000:00", 0, rp2), PHB, "via host bridge pci0000:00"},
		{"both on the root bus", gpu("pci0000:00", 0), nic("pci0000:00", 0), PHB, "via host bridge pci0000:00"},
		{"host bridges, one NUMA node", gpu("pci0000:00", 0, rp), nic("pci0000:40", 0, rp), NODE, "host bridges pci0000:00 and pci0000:40 on NUMA node 0"},
		{"across sockets", gpu("pci0000:00", 0, rp), nic("pci0000:80", 1, rp), SYS, "across NUMA nodes 0 and 1"},
		{"unknown NUMA, other root", gpu("pci0000:00", -1, rp), nic("pci0000:40", -1, rp), SYS, "host bridges pci0000:00 and pci0000:40, NUMA node unknown"},
		{"unknown NUMA, same root", gpu("pci0000:00", -1, rp, u1, d1), nic("pci0000:00", -1, rp, u1, d4), PIX, "via switch " + u1},
		{"NIC location unknown", gpu("pci0000:00", 0, rp), nic("", -1), SYS, "location unknown"},
		{"GPU location unknown", gpu("", 0), nic("pci0000:00", 0, rp), SYS, "location unknown"},
	}
	var m Machine
	for _, tc := range tests {
		c, via := distance(tc.g, tc.n)
		if c != tc.want || via != tc.via {
			t.Errorf("%s: %s %q, want %s %q", tc.name, c, via, tc.want, tc.via)
		}
		if got := m.Distance(tc.g, tc.n); got != tc.want {
			t.Errorf("%s: Distance = %s, want %s", tc.name, got, tc.want)
		}
	}
}
