package readiness

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// machine writes a fake machine and returns its root.
func machine(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	if _, err := fakesys.Write(root, name, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	return root
}

func checker(t *testing.T, root, proc string) *Checker {
	t.Helper()
	c, err := NewChecker(root, proc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// only keeps the checks of one name.
func only(checks []api.ReadinessCheck, name string) []api.ReadinessCheck {
	var out []api.ReadinessCheck
	for _, c := range checks {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

func TestPortChecks(t *testing.T) {
	pod := netip.MustParsePrefix("192.168.50.7/24")
	other := "::ffff:192.168.50.9"
	tests := []struct {
		name    string
		machine string
		rail    Rail
		setup   func(t *testing.T, root string)
		check   string
		want    api.CheckStatus
		reason  string
		msgHas  string
	}{
		{name: "IB port active", machine: "h100x8-cx7x4", check: checkPort, want: api.CheckPass,
			rail: Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.InfiniBand, GIDIndex: -1}, msgHas: "ACTIVE"},
		{name: "IB port down", machine: "h100x8-cx7x4", check: checkPort, want: api.CheckFail, reason: ReasonPortNotActive,
			rail:  Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.InfiniBand, GIDIndex: -1},
			setup: func(t *testing.T, root string) { must(t, fakesys.SetPortState(root, "mlx5_0", 1, "DOWN")) }, msgHas: "is DOWN, want ACTIVE"},
		{name: "device gone", machine: "h100x8-cx7x4", check: checkPort, want: api.CheckFail, reason: ReasonPortNotActive,
			rail: Rail{Device: "mlx5_9", Port: 1, GIDIndex: -1}, msgHas: "cannot read the state of mlx5_9 port 1"},
		{name: "exclusive device hidden from the host", machine: "h100x8-cx7x4", check: checkPort, want: api.CheckSkip,
			rail: Rail{Device: "mlx5_9", Port: 1, GIDIndex: -1, Exclusive: true}, msgHas: "not visible from the host"},
		{name: "link layer as placed", machine: "h100x8-cx7x4", check: checkLinkLayer, want: api.CheckPass,
			rail: Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.InfiniBand, GIDIndex: -1}},
		{name: "link layer changed", machine: "h100x8-cx7x4", check: checkLinkLayer, want: api.CheckFail, reason: ReasonWrongLinkLayer,
			rail: Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, GIDIndex: -1}, msgHas: "is InfiniBand, placed as Ethernet"},
		{name: "IB has no GID check", machine: "h100x8-cx7x4", check: checkGID, want: "",
			rail: Rail{Device: "mlx5_0", Port: 1, Addresses: []netip.Prefix{pod}, GIDIndex: 3}},
		{name: "RoCE GID at the given index", machine: "lab-1x1", check: checkGID, want: api.CheckPass,
			rail:  Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, Addresses: []netip.Prefix{pod}, GIDIndex: 3},
			setup: gids("fe80::1", "fe80::1", "::ffff:10.0.0.1", "::ffff:192.168.50.7"), msgHas: "at GID index 3"},
		{name: "RoCE GID moved to another index", machine: "lab-1x1", check: checkGID, want: api.CheckFail, reason: ReasonGIDMissing,
			rail:  Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, Addresses: []netip.Prefix{pod}, GIDIndex: 3},
			setup: gids("fe80::1", "::ffff:192.168.50.7", "::ffff:10.0.0.1", other), msgHas: "(now at index 1)"},
		{name: "RoCE GID gone", machine: "lab-1x1", check: checkGID, want: api.CheckFail, reason: ReasonGIDMissing,
			rail:  Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, Addresses: []netip.Prefix{pod}, GIDIndex: 1},
			setup: gids("fe80::1", other), msgHas: "holds " + other + ", not the pod's 192.168.50.7"},
		{name: "RoCE index past the table", machine: "lab-1x1", check: checkGID, want: api.CheckFail, reason: ReasonGIDMissing,
			rail:  Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, Addresses: []netip.Prefix{pod}, GIDIndex: 7},
			setup: gids("fe80::1"), msgHas: "were given GID index 7"},
		{name: "RoCE no index given: anywhere", machine: "lab-1x1", check: checkGID, want: api.CheckPass,
			rail:  Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, Addresses: []netip.Prefix{pod}, GIDIndex: -1},
			setup: gids("fe80::1", "::ffff:192.168.50.7"), msgHas: "at GID index 1 (no index"},
		{name: "RoCE no index given, GID absent", machine: "lab-1x1", check: checkGID, want: api.CheckFail, reason: ReasonGIDMissing,
			rail:  Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, Addresses: []netip.Prefix{pod}, GIDIndex: -1},
			setup: gids("fe80::1"), msgHas: "no GID of mlx5_0 port 1 holds 192.168.50.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := machine(t, tt.machine)
			if tt.setup != nil {
				tt.setup(t, root)
			}
			got := only(checker(t, root, "").port(tt.rail), tt.check)
			if tt.want == "" {
				if len(got) != 0 {
					t.Fatalf("want no %s check, got %+v", tt.check, got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one %s check, got %+v", tt.check, got)
			}
			c := got[0]
			if c.Status != tt.want || c.Reason != tt.reason || !strings.Contains(c.Message, tt.msgHas) {
				t.Fatalf("got %+v; want %s %q containing %q", c, tt.want, tt.reason, tt.msgHas)
			}
			if c.Status == api.CheckFail && c.Fix == "" && tt.check != checkLinkLayer {
				t.Fatalf("a failure without a fix: %+v", c)
			}
		})
	}
}

// gids writes port 1 of mlx5_0's GID table, every entry RoCE v2.
func gids(entries ...string) func(t *testing.T, root string) {
	return func(t *testing.T, root string) {
		types := make([]string, len(entries))
		for i := range types {
			types[i] = "RoCE v2"
		}
		dir := filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1/gids")
		must(t, os.RemoveAll(dir))
		must(t, fakesys.WriteGIDs(root, "mlx5_0", 1, entries, types))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
