package topology_test

import (
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestPKeyIndex(t *testing.T) {
	tests := []struct {
		name  string
		pkeys []string
		pkey  uint16
		want  int
		ok    bool
	}{
		{"full member at index 2", []string{"0xffff", "0x0000", "0x8001"}, 0x8001, 2, true},
		{"asked without the membership bit", []string{"0xffff", "0x8001"}, 0x0001, 1, true},
		{"full member wins over limited", []string{"0xffff", "0x0001", "0x8001"}, 0x8001, 2, true},
		{"limited only", []string{"0xffff", "0x0001"}, 0x8001, 1, true},
		{"default partition", []string{"0x7fff", "0xffff"}, 0xffff, 1, true},
		{"garbage entry skipped", []string{"bogus", "0x8002"}, 0x8002, 1, true},
		{"absent", []string{"0xffff", "0x8001"}, 0x8003, 0, false},
		{"no partition number", []string{"0x8000"}, 0x8000, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := fakesys.WritePKeys(root, "mlx5_0", 1, tt.pkeys); err != nil {
				t.Fatal(err)
			}
			got, err := portReader(t, root).PKeyIndex("mlx5_0", 1, tt.pkey)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("PKeyIndex(%#04x) = %d, %v; want %d, ok=%v", tt.pkey, got, err, tt.want, tt.ok)
			}
		})
	}
	if _, err := portReader(t, withSys(t)).PKeyIndex("mlx5_0", 1, 0x8001); err == nil {
		t.Fatal("a port without a P_Key table must be an error")
	}
}
