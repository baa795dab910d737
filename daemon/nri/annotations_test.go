package nri

import (
	"context"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestAnnotationRefusals: anything but bare names of this node's RDMA
// character devices, or any name outside an allowed namespace, is refused
// with a logged reason; the container still starts and nothing from the
// annotation is injected (a lease's devices still are).
func TestAnnotationRefusals(t *testing.T) {
	tests := []struct {
		name   string
		ns     string
		key    string
		value  string
		reason string
	}{
		{"absolute path", "hpc", "rail.dev/devices", "/dev/sda", "is a path"},
		{"dot-dot", "hpc", "rail.dev/devices", "../../dev/mem", `contains ".."`},
		{"path under infiniband", "hpc", "rail.dev/devices", "/dev/infiniband/uverbs0", "is a path"},
		{"dot-dot after a good name", "hpc", "rail.dev/devices", "uverbs0/../../mem", `contains ".."`},
		{"block device by name", "hpc", "rail.dev/devices", "sda", "not an RDMA character device"},
		{"device of another class", "hpc", "rail.dev/devices", "nvidia0", "not an RDMA character device"},
		{"misc device", "hpc", "rail.dev/devices", "kvm", "not an RDMA character device"},
		{"name with a suffix", "hpc", "rail.dev/devices", "uverbs0x", "not an RDMA character device"},
		{"class name without a number", "hpc", "rail.dev/devices", "uverbs", "not an RDMA character device"},
		{"rdma_cm with a suffix", "hpc", "rail.dev/devices", "rdma_cm2", "not an RDMA character device"},
		{"RDMA name not on this node", "hpc", "rail.dev/devices", "uverbs9", "does not exist on this node"},
		{"issm the NIC lacks", "hpc", "rail.dev/devices", "issm1", "does not exist on this node"},
		{"one bad entry refuses all", "hpc", "rail.dev/devices", "uverbs1,rdma_cm,/dev/mem", "is a path"},
		{"empty list", "hpc", "rail.dev/devices", " , ", "names no device"},
		{"oversized value", "hpc", "rail.dev/devices", strings.Repeat("uverbs1,", 200), "more than"},
		{"namespace not allowed", "default", "rail.dev/devices", "uverbs1", `namespace "default" is not listed`},
		{"per-container key, bad value", "hpc", "rail.dev/devices.app", "/dev/sda", "is a path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, withLease := range []bool{false, true} {
				st := newFakeState()
				if withLease {
					st.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0")
				}
				p, logs := newTestPlugin(t, Config{AnnotationNamespaces: []string{"hpc"}}, t.TempDir(), st)
				adj, _, err := p.CreateContainer(context.Background(),
					pod("s1", tt.ns, map[string]string{tt.key: tt.value}), ctr("app"))
				if err != nil {
					t.Fatalf("CreateContainer failed (the container must still start): %v", err)
				}
				got := summarize(adj)
				for _, d := range got.Devices {
					if !withLease || !(strings.Contains(d, "/uverbs0 ") || strings.Contains(d, "/rdma_cm ")) {
						t.Errorf("lease=%v: injected %s from a refused annotation", withLease, d)
					}
				}
				if withLease && len(got.Devices) != 2 {
					t.Errorf("lease devices must still be injected, got %v", got.Devices)
				}
				recs := logs.records(t, "refused device annotation")
				if len(recs) != 1 {
					t.Fatalf("want one logged refusal, logs:\n%s", logs)
				}
				if reason, _ := recs[0]["error"].(string); !strings.Contains(reason, tt.reason) {
					t.Errorf("refusal reason %q, want it to say %q", reason, tt.reason)
				}
			}
		})
	}
}

func TestAnnotationAcceptsNodeDevices(t *testing.T) {
	p, _ := newTestPlugin(t, Config{UMAD: true}, t.TempDir(), newFakeState())
	for _, name := range []string{"uverbs0", "uverbs3", "umad1", "issm0", "rdma_cm"} {
		d, err := p.tables().devs.lookup(name)
		if err != nil {
			t.Errorf("lookup(%q): %v", name, err)
			continue
		}
		if d.dev.Path != "/dev/infiniband/"+name || d.dev.Type != "c" {
			t.Errorf("lookup(%q) = %s %s", name, d.dev.Type, d.dev.Path)
		}
	}
	if _, err := p.tables().devs.lookup("sda"); err == nil {
		t.Error("the block device a broken sysfs entry names must not be choosable")
	}
}
