package railpool

import (
	"context"
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

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
	// Through the API server's objects: what raild claims carries them.
	c := newCluster(t, []*corev1.Node{node("n1", "uid-n1", nil)}, p)
	res, err := c.claimer("n1").NodePools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pools) != 1 || !reflect.DeepEqual(res.Pools[0].PoolVF, p.Spec.PoolVF) || res.Pools[0].VFPerGPU == nil {
		t.Fatalf("claimed pools %+v, want the RailPool's VF settings %+v", res.Pools, p.Spec.PoolVF)
	}
}
