package topology

import (
	"slices"
	"testing"
)

func TestParseBDF(t *testing.T) {
	tests := []struct {
		in string
		ok bool
		b  bdf
	}{
		{"0000:18:00.0", true, bdf{0, 0x18, 0, 0}},
		{"0001:af:1f.7", true, bdf{1, 0xaf, 0x1f, 7}},
		{"10000:e1:00.0", true, bdf{0x10000, 0xe1, 0, 0}},
		{"18:00.0", false, bdf{}},
		{"0000:18:20.0", false, bdf{}},
		{"0000:18:00.8", false, bdf{}},
		{"0000:1g:00.0", false, bdf{}},
		{"pci0000:00", false, bdf{}},
		{"bind", false, bdf{}},
	}
	for _, tc := range tests {
		b, ok := parseBDF(tc.in)
		if ok != tc.ok || b != tc.b {
			t.Errorf("parseBDF(%q) = %+v %v, want %+v %v", tc.in, b, ok, tc.b, tc.ok)
		}
	}
	addrs := []string{"0000:9a:00.0", "0001:00:00.0", "0000:1a:00.0", "0000:18:00.1", "0000:18:00.0", "10000:00:00.0"}
	slices.SortFunc(addrs, func(a, b string) int {
		if pciLess(a, b) {
			return -1
		}
		return 1
	})
	want := []string{"0000:18:00.0", "0000:18:00.1", "0000:1a:00.0", "0000:9a:00.0", "0001:00:00.0", "10000:00:00.0"}
	if !slices.Equal(addrs, want) {
		t.Errorf("PCI order %v, want %v", addrs, want)
	}
}

func TestNormalizePCI(t *testing.T) {
	for in, want := range map[string]string{
		"0000:19:00.0": "0000:19:00.0", "19:00.0": "0000:19:00.0", " 0000:AF:00.1 ": "0000:af:00.1",
		"mlx5_0": "", "19:00": "", "": "",
	} {
		if got := normalizePCI(in); got != want {
			t.Errorf("normalizePCI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPCILocation(t *testing.T) {
	tests := []struct {
		name, path, root, dev string
		chain                 []string
		ok                    bool
	}{
		{"switch", "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0",
			"pci0000:15", "0000:18:00.0", []string{"0000:15:01.0", "0000:16:00.0", "0000:17:00.0"}, true},
		{"below the device", "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/infiniband/mlx5_0",
			"pci0000:15", "0000:16:00.0", []string{"0000:15:01.0"}, true},
		{"root bus device", "/sys/devices/pci0000:00/0000:00:14.0", "pci0000:00", "0000:00:14.0", nil, true},
		{"vmd domain", "/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0",
			"pci0000:00", "10000:e1:00.0", []string{"0000:00:0e.0", "10000:e0:06.0"}, true},
		{"hyper-v", "/sys/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0A03:00/device:07/VMBUS:01/47505500-0001-0000-3130-444531303244/pci0001:00/0001:00:02.0",
			"pci0001:00", "0001:00:02.0", nil, true},
		{"virtual", "/sys/devices/virtual/infiniband/rxe0", "", "", nil, false},
		{"host bridge only", "/sys/devices/pci0000:00", "", "", nil, false},
	}
	for _, tc := range tests {
		root, chain, dev, ok := pciLocation(tc.path)
		if root != tc.root || dev != tc.dev || ok != tc.ok || !slices.Equal(chain, tc.chain) {
			t.Errorf("%s: %q %v %q %v, want %q %v %q %v", tc.name, root, chain, dev, ok, tc.root, tc.chain, tc.dev, tc.ok)
		}
	}
}

func TestNaturalOrder(t *testing.T) {
	names := []string{"mlx5_10", "rxe0", "mlx5_bond_0", "mlx5_2", "mlx5_1", "mlx4_0", "mlx5_02"}
	sortNatural(names)
	want := []string{"mlx4_0", "mlx5_1", "mlx5_02", "mlx5_2", "mlx5_10", "mlx5_bond_0", "rxe0"}
	if !slices.Equal(names, want) {
		t.Errorf("natural order %v, want %v", names, want)
	}
}
