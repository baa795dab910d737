package recovery

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/attach"
)

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
