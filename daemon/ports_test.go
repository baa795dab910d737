package main

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// dualPortMachine writes dualport-2s with port 2 of mlx4_0 DOWN.
func dualPortMachine(t *testing.T) (*topology.Machine, string) {
	t.Helper()
	root := t.TempDir()
	if _, err := fakesys.Write(root, "dualport-2s", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := fakesys.SetPortState(root, "mlx4_0", 2, "DOWN"); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return m, root
}

// TestDoctorDualPort: doctor checks every port of a dual-port HCA on its
// own line and its shared uverbs node once.
func TestDoctorDualPort(t *testing.T) {
	m, root := dualPortMachine(t)
	var lines []string
	for _, c := range topologyChecks(m, root, 0) {
		lines = append(lines, c.level+" "+c.what)
	}
	tests := []struct {
		line  string
		count int
	}{
		{"ok mlx4_0 (ibp26s0, InfiniBand) port 1 ACTIVE", 1},
		{"warn mlx4_0:2 (ibp26s0d1, InfiniBand) port 2 DOWN", 1},
		{"ok mlx4_1:2 (ens2d1, Ethernet) port 2 ACTIVE", 1},
		{"ok mlx5_0 (ibp155s0, InfiniBand) port 1 ACTIVE", 1},
		{"warn mlx4_0 device node /dev/infiniband/uverbs0", 1},
		{"warn mlx4_0: port 2 DOWN (LinkUp)", 1},
		{"ok 3 RDMA device(s) in /sys/class/infiniband, 5 ports (each a NIC of its own)", 1},
	}
	for _, tc := range tests {
		if n := countLines(lines, tc.line); n != tc.count {
			t.Errorf("%q appears %d times, want %d:\n%s", tc.line, n, tc.count, strings.Join(lines, "\n"))
		}
	}
}

func countLines(lines []string, want string) int {
	n := 0
	for _, l := range lines {
		if l == want {
			n++
		}
	}
	return n
}

// TestRailIndexDualPort: each port is a rail of its own in affinity order;
// a PCI address in rails.nics numbers every port of its function.
func TestRailIndexDualPort(t *testing.T) {
	m, _ := dualPortMachine(t)
	tests := []struct {
		name  string
		rails map[string]int
		want  string
	}{
		// mlx4_0:2 is DOWN: GPU1 shares mlx4_0 with GPU0.
		{"affinity order", nil, "mlx4_0=0 mlx4_1:2=2 mlx4_1=1 mlx5_0=3"},
		{"port 2 by name", map[string]int{"mlx4_0:2": 7}, "mlx4_0:2=7"},
		{"PCI address: both ports", map[string]int{"0000:1f:00.0": 4}, "mlx4_1:2=4 mlx4_1=4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Rails: config.Rails{NICs: tt.rails}}
			got, err := railIndex(cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for nic, r := range got {
				parts = append(parts, fmt.Sprintf("%s=%d", nic, r))
			}
			slices.Sort(parts)
			if strings.Join(parts, " ") != tt.want {
				t.Errorf("rails %v, want %s", parts, tt.want)
			}
		})
	}
}

// TestRecoverDualPortLease: a lease rebuilt from a pod interface's alias
// names the port the alias records ("nicport=2" gives mlx4_0:2); an alias
// without it (port 1, or an older rail) names the device alone.
func TestRecoverDualPortLease(t *testing.T) {
	pools, err := ipam.NewPools([]ipam.PoolConfig{{Name: "p", Subnet: "10.9.0.0/24"}}, "node1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		alias string
		want  string
	}{
		{"rail:ibp26s0d1:name=rail0:mtu=4092:up=1:sb=s1:pool=p:nic=mlx4_0:nicport=2", "mlx4_0:2"},
		{"rail:ibp26s0:name=rail0:mtu=4092:up=1:sb=s1:pool=p:nic=mlx4_0", "mlx4_0"},
		{"rail:ibp155s0:name=rail0:mtu=4092:up=1:sb=s1:pool=p:nic=mlx5_0:nicport=x", "mlx5_0"},
	}
	for _, tc := range tests {
		rec, ok := attach.ReadAlias(tc.alias)
		if !ok {
			t.Fatalf("alias %q not read", tc.alias)
		}
		pl := podLink{Netns: "/var/run/netns/x", Name: "rail0", Rail: &rec, Addrs: []netip.Prefix{netip.MustParsePrefix("10.9.0.7/24")}}
		l, ok, note := leaseFor(pl, pools, time.Now())
		if !ok || strings.Join(l.NICs, ",") != tc.want {
			t.Errorf("%s: lease NICs %v (%v, %s), want %s", tc.alias, l.NICs, ok, note, tc.want)
		}
	}
}
