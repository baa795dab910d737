package service

import (
	"context"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// routeGuard is the inventory's view of frontend-lag: its front-end NIC
// carries the default route, its LAG is what sysfs shows.
type routeGuard struct{ m func() *topology.Machine }

func (g routeGuard) Protected() map[string]topology.Protection {
	p := g.m().LinkProtection()
	p["mlx5_2"] = topology.Protection{Reasons: []topology.ProtectReason{
		{Kind: topology.ProtectDefaultRoute, Detail: "default via 10.99.0.1 dev ens3np0"}}}
	return p
}

func (g routeGuard) Recheck(nics []topology.NIC) (map[string]topology.Protection, error) {
	all, out := g.Protected(), map[string]topology.Protection{}
	for _, n := range nics {
		if p, ok := all[n.Name]; ok {
			out[n.Name] = p
		}
	}
	return out, nil
}

// TestMoveRefusesTheNodesNIC: three move pods on GPU0 get its NIC, the
// socket's other rail, then - under a PHB bound - a refusal that names
// the next NIC tried (SYS), the bound and the node's NIC with why.
func TestMoveRefusesTheNodesNIC(t *testing.T) {
	var svc *Service
	svc, _ = newService(t, "frontend-lag", onePool(), nil, func(o *Options) { o.Guard = routeGuard{m: func() *topology.Machine { return svc.Machine() }} })
	ctx := context.Background()
	for i, want := range []string{"rail0=mlx5_0", "rail0=mlx5_1"} {
		plan, err := svc.Allocate(ctx, allocReq(string(rune('a'+i)), "0"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(nicsOf(plan), ","); got != want {
			t.Fatalf("pod %d got %s, want %s", i, got, want)
		}
	}
	req := allocReq("c", "0")
	phb := topology.PHB
	req.MaxDistance = &phb
	_, err := svc.Allocate(ctx, req)
	for _, want := range []string{"GPU 0: the closest free NIC mlx5_3 is SYS, beyond netconf maxDistance PHB",
		"mlx5_2 PHB (protected: carries the host's default route (default via 10.99.0.1 dev ens3np0); move never takes the node's own NIC)"} {
		if !api.IsCode(err, api.CodeNoNIC) || !strings.Contains(err.Error(), want) {
			t.Fatalf("third pod: %v, want CodeNoNIC with %q", err, want)
		}
	}
	r := svc.Topology()
	if !r.Protected["mlx5_2"].Has(topology.ProtectDefaultRoute) || !r.Protected["mlx5_bond_0"].LAG {
		t.Fatalf("topology's protected NICs = %v", r.Protected)
	}
}
