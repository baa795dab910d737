package service

import (
	"context"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

func TestInterfaceNames(t *testing.T) {
	byRail := func(sandbox, gpus string) api.AllocateRequest {
		r := allocReq(sandbox, gpus)
		r.IfNames = api.IfNamesRail
		return r
	}
	tests := []struct {
		name     string
		req      api.AllocateRequest
		rails    map[string]int // nil: the node's affinity rails
		want     string         // interfaces as name=nic
		wantNICs string         // SandboxLeases' NICs in order (NCCL_IB_HCA order)
		wantErr  string
	}{
		{name: "order: in the order the GPUs chose", req: allocReq("a", "6,4"), want: "rail0=mlx5_2,rail1=mlx5_3", wantNICs: "mlx5_2,mlx5_3"},
		{name: "order: rails do not matter", req: allocReq("a", "0,2"), rails: map[string]int{"mlx5_0": 11, "mlx5_1": 2, "mlx5_2": 0, "mlx5_3": 1},
			want: "rail0=mlx5_0,rail1=mlx5_1", wantNICs: "mlx5_0,mlx5_1"},
		{name: "rail: by rail index whatever the GPU order", req: byRail("a", "6,4"), want: "rail2=mlx5_2,rail3=mlx5_3", wantNICs: "mlx5_2,mlx5_3"},
		{name: "rail: same GPUs the other way round", req: byRail("a", "4,6"), want: "rail2=mlx5_2,rail3=mlx5_3", wantNICs: "mlx5_2,mlx5_3"},
		{name: "rail: one NIC", req: byRail("a", "2"), want: "rail1=mlx5_1", wantNICs: "mlx5_1"},
		{name: "rail: with a prefix", req: func() api.AllocateRequest { r := byRail("a", "7"); r.IfPrefix = "ib"; return r }(),
			want: "ib3=mlx5_3", wantNICs: "mlx5_3"},
		{name: "rail: explicit rails beyond ten", req: byRail("a", "0,2"), rails: map[string]int{"mlx5_0": 11, "mlx5_1": 2, "mlx5_2": 0, "mlx5_3": 1},
			want: "rail2=mlx5_1,rail11=mlx5_0", wantNICs: "mlx5_1,mlx5_0"},
		{name: "rail: a NIC without a rail", req: byRail("a", "0"), rails: map[string]int{"mlx5_1": 1},
			wantErr: `NIC mlx5_0 carries no rail on this node (rails: mlx5_1=1)`},
		{name: "rail: two NICs on one rail", req: byRail("a", "0,2"), rails: map[string]int{"mlx5_0": 1, "mlx5_1": 1},
			wantErr: "both carry rail 1"},
		{name: "rail: alone is refused", req: func() api.AllocateRequest { r := byRail("a", "0"); r.Chained = false; return r }(),
			wantErr: "names chained interfaces only"},
		{name: "unknown ifNames", req: func() api.AllocateRequest { r := allocReq("a", "0"); r.IfNames = "pci"; return r }(),
			wantErr: `invalid field "ifNames"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil, func(o *Options) {
				if tt.rails != nil {
					o.Rails = tt.rails
				}
			})
			plan, err := svc.Allocate(context.Background(), tt.req)
			if tt.wantErr != "" {
				if !api.IsCode(err, api.CodeInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want a code 7 error mentioning %q", err, tt.wantErr)
				}
				if len(svc.Leases()) != 0 {
					t.Fatalf("a refused ADD left leases: %+v", svc.Leases())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(nicsOf(plan), ","); got != tt.want {
				t.Fatalf("interfaces = %s, want %s", got, tt.want)
			}
			var nics []string
			for _, l := range svc.SandboxLeases("a") {
				nics = append(nics, l.NICs...)
			}
			if got := strings.Join(nics, ","); got != tt.wantNICs {
				t.Errorf("SandboxLeases NICs = %s, want %s", got, tt.wantNICs)
			}
		})
	}
}
