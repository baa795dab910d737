package railpool

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/railcni/rail/ipam"
)

// TestPoolConfigCarriesVFSettings: a RailPool's vfPerGPU and VF settings
// reach the node's pool as a config pool's do.
func TestPoolConfigCarriesVFSettings(t *testing.T) {
	on, vlan, rate := true, 300, int64(2000)
	p := pool("decode", "10.1.0.0/24", 26, func(s *PoolSpec) {
		s.VFPerGPU = &on
		s.PoolVF = ipam.PoolVF{VLAN: &vlan, Spoofchk: "off", Trust: "on", LinkState: "auto", MaxTxRate: &rate}
	})
	got := poolConfig(p, "n1", netip.MustParsePrefix("10.1.0.0/26"))
	if got.VFPerGPU == nil || !*got.VFPerGPU || !reflect.DeepEqual(got.PoolVF, p.Spec.PoolVF) {
		t.Fatalf("pool config %+v lost the RailPool's VF settings %+v", got, p.Spec.PoolVF)
	}
	if _, err := check(p, "n1"); err != nil {
		t.Fatalf("valid VF settings refused: %v", err)
	}
}
