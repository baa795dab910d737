package service

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

func TestDistanceBound(t *testing.T) {
	phb := topology.PHB
	rail1 := 1
	withBound := func(sandbox, gpus string, bound *topology.Class) api.AllocateRequest {
		r := allocReq(sandbox, gpus)
		r.MaxDistance = bound
		return r
	}
	tests := []struct {
		name    string
		pools   []ipam.PoolConfig
		taken   []string // sandboxes holding GPUs 0 and 2 first (mlx5_0, mlx5_1)
		req     api.AllocateRequest
		want    string   // interface=NIC, or "" for a refusal
		wantErr []string // in the refusal
		class   string   // the placement counted
	}{
		{name: "permissive default takes a SYS NIC and counts it", pools: onePool(), taken: []string{"0", "2"},
			req: allocReq("p", "0"), want: "rail0=mlx5_2", class: "SYS"},
		{name: "netconf bound refuses and names the holders", pools: onePool(), taken: []string{"0", "2"},
			req:     withBound("p", "0", &phb),
			wantErr: []string{"GPU 0", "mlx5_2 is SYS", "netconf maxDistance PHB", "mlx5_0 PIX (moved into pod default/pod-h0)", "mlx5_1 PHB (moved into pod default/pod-h2)"}},
		{name: "netconf bound met", pools: onePool(), req: withBound("p", "0", &phb), want: "rail0=mlx5_0", class: "PIX"},
		{name: "pool bound of an explicit pool", pools: []ipam.PoolConfig{{Name: "near", Subnet: "10.77.0.0/24", MaxDistance: "pxb"}},
			taken: []string{"0"}, req: func() api.AllocateRequest { r := allocReq("p", "0"); r.Pool = "near"; return r }(),
			wantErr: []string{"beyond pool near maxDistance PXB", "mlx5_1 is PHB"}},
		{name: "pool bound of the NIC's own pool", pools: []ipam.PoolConfig{
			{Name: "r0", Subnet: "10.77.0.0/24", Rail: new(int)},
			{Name: "r1", Subnet: "10.78.0.0/24", Rail: &rail1, MaxDistance: "PIX"},
			{Name: "r2", Subnet: "10.79.0.0/24", Rail: func() *int { r := 2; return &r }()},
			{Name: "r3", Subnet: "10.80.0.0/24", Rail: func() *int { r := 3; return &r }()}},
			taken: []string{"0"}, req: allocReq("p", "1"),
			wantErr: []string{"GPU 1", "beyond pool r1 maxDistance PIX"}},
		{name: "no GPUs: counted as none", pools: onePool(), req: func() api.AllocateRequest {
			r := allocReq("p", "")
			r.Annotations = map[string]string{api.AnnotationAttach: "true"}
			r.Selector.NICs = []string{"mlx5_3"}
			return r
		}(), want: "rail0=mlx5_3", class: "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics.New()
			svc, _ := newService(t, "h100x8-cx7x4", tt.pools, nil, func(o *Options) { o.Metrics = m })
			ctx := context.Background()
			for _, gpu := range tt.taken {
				r := allocReq("h"+gpu, gpu)
				r.Pool = tt.pools[0].Name
				if _, err := svc.Allocate(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			before := len(svc.Leases())
			plan, err := svc.Allocate(ctx, tt.req)
			if len(tt.wantErr) > 0 {
				if !api.IsCode(err, api.CodeNoNIC) {
					t.Fatalf("got %v, %v; want a code %d refusal", plan, err, api.CodeNoNIC)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if len(svc.Leases()) != before {
					t.Errorf("a refused ADD left leases: %+v", svc.Leases())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(nicsOf(plan), ","); got != tt.want {
				t.Fatalf("interfaces = %s, want %s", got, tt.want)
			}
			if plan.Interfaces[0].Distance != tt.class {
				t.Errorf("plan distance = %q, want %q", plan.Interfaces[0].Distance, tt.class)
			}
			nic := plan.Interfaces[0].NIC.RDMADevice
			if got := testutil.ToFloat64(m.Placements.WithLabelValues(nic, tt.class)); got != 1 {
				t.Errorf("rail_placements_total{nic=%s,class=%s} = %v, want 1", nic, tt.class, got)
			}
		})
	}
}
