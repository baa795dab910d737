package service

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// claimsOf is a DRAClaims over a fixed table of pods.
func claimsOf(byPod map[string][]DRAClaim) func(*Options) {
	return func(o *Options) {
		o.DRAClaims = func(ns, name, _ string) []DRAClaim { return byPod[ns+"/"+name] }
	}
}

func TestAllocateClaimed(t *testing.T) {
	twoPools := []ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/24"}, {Name: "dra", Subnet: "10.88.0.0/24"}}
	vlan := 100
	for _, tc := range []struct {
		name    string
		machine string
		claims  map[string][]DRAClaim
		req     func(*api.AllocateRequest)
		before  []string // sandboxes allocated first (pod-<sandbox>, GPU 0, move)
		want    []string // nics of the plan
		mode    api.Mode
		pool    string
		wantErr string
	}{
		{name: "the claimed port, not the closest one", machine: "h100x8-cx7x4",
			claims: map[string][]DRAClaim{"default/pod-a": {{Claim: "default/c", Device: "mlx5-3", NIC: "mlx5_3", Mode: api.ModeIPoIB}}},
			want:   []string{"rail0=mlx5_3"}, mode: api.ModeIPoIB, pool: "rail"},
		{name: "the claim's pool", machine: "h100x8-cx7x4",
			claims: map[string][]DRAClaim{"default/pod-a": {{Claim: "default/c", Device: "mlx5-0", NIC: "mlx5_0", Mode: api.ModeIPoIB, Pool: "dra"}}},
			want:   []string{"rail0=mlx5_0"}, mode: api.ModeIPoIB, pool: "dra"},
		{name: "every claimed port", machine: "h100x8-cx7x4",
			claims: map[string][]DRAClaim{"default/pod-a": {{Claim: "default/c", Device: "mlx5-0", NIC: "mlx5_0", Mode: api.ModeMove},
				{Claim: "default/c", Device: "mlx5-2", NIC: "mlx5_2", Mode: api.ModeMove}}},
			want: []string{"rail0=mlx5_0", "rail1=mlx5_2"}, mode: api.ModeMove, pool: "rail"},
		{name: "a pod without GPUs and without the annotation still gets its claim", machine: "h100x8-cx7x4",
			claims: map[string][]DRAClaim{"default/pod-a": {{Claim: "default/c", Device: "mlx5-1", NIC: "mlx5_1", Mode: api.ModeMove}}},
			req:    func(r *api.AllocateRequest) { r.Annotations = map[string]string{} }, want: []string{"rail0=mlx5_1"}, mode: api.ModeMove, pool: "rail"},
		{name: "a port moved into a pod outside DRA is refused", machine: "h100x8-cx7x4", before: []string{"x"},
			claims:  map[string][]DRAClaim{"default/pod-a": {{Claim: "default/c", Device: "mlx5-0", NIC: "mlx5_0", Mode: api.ModeMove}}},
			wantErr: "claimed NIC mlx5_0: moved into pod default/pod-x"},
		{name: "claims that disagree", machine: "h100x8-cx7x4",
			claims: map[string][]DRAClaim{"default/pod-a": {{Claim: "default/c", Device: "mlx5-0", NIC: "mlx5_0", Mode: api.ModeMove},
				{Claim: "default/d", Device: "mlx5-1", NIC: "mlx5_1", Mode: api.ModeIPoIB}}},
			wantErr: "one attachment takes one mode and pool"},
		{name: "the claimed VF with the claim's VLAN", machine: "h100x8-cx7x8-sriov",
			claims: map[string][]DRAClaim{"default/pod-a": {{Claim: "default/c", Device: "mlx5-5-vf2", NIC: "mlx5_5", VF: "@vf", Mode: api.ModeVF,
				VFKeys: &api.VFConfig{VLAN: &vlan}}}},
			want: []string{"@vf"}, mode: api.ModeVF, pool: "rail"},
		{name: "pods without claims are placed as before", machine: "h100x8-cx7x4",
			claims: map[string][]DRAClaim{"default/pod-b": {{Claim: "default/c", Device: "mlx5-3", NIC: "mlx5_3", Mode: api.ModeIPoIB}}},
			want:   []string{"rail0=mlx5_0"}, mode: api.ModeMove, pool: "rail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claims := tc.claims
			svc, _ := newService(t, tc.machine, twoPools, nil, claimsOf(claims))
			vfPCI := ""
			if tc.mode == api.ModeVF {
				pf, _ := svc.Machine().NICByName("mlx5_5")
				for _, p := range svc.Machine().PFs {
					if p.PCI == pf.PCI {
						vfPCI = p.VFs[2].PCI
					}
				}
				for k, cs := range claims {
					for i := range cs {
						if cs[i].VF == "@vf" {
							cs[i].VF = vfPCI
						}
					}
					claims[k] = cs
				}
			}
			for _, sb := range tc.before {
				r := allocReq(sb, "0")
				r.Pool = "rail"
				if _, err := svc.Allocate(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
			req := allocReq("a", "0")
			req.Pool = "rail"
			if tc.req != nil {
				tc.req(&req)
			}
			plan, err := svc.Allocate(context.Background(), req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error()+errDetails(err), tc.wantErr) {
					t.Fatalf("error %v (%s), want %q", err, errDetails(err), tc.wantErr)
				}
				if ls := svc.alloc.Get("a", "eth0", "net"); len(ls) > 0 {
					t.Errorf("a refused claim left leases: %+v", ls)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v (%s)", err, errDetails(err))
			}
			got := nicsOf(plan)
			want := tc.want
			if tc.mode == api.ModeVF {
				if len(plan.Interfaces) != 1 || plan.Interfaces[0].VF == nil || plan.Interfaces[0].VF.PCI != vfPCI {
					t.Fatalf("plan %+v, want VF %s", plan.Interfaces, vfPCI)
				}
				if pc := plan.Interfaces[0].VF.PoolConfig; pc == nil || pc.VLAN == nil || *pc.VLAN != 100 {
					t.Errorf("VF settings %+v, want the claim's vlan 100", pc)
				}
				got, want = nil, nil
			}
			if !slices.Equal(got, want) || plan.Mode != tc.mode {
				t.Fatalf("plan %v mode %s, want %v mode %s", got, plan.Mode, want, tc.mode)
			}
			for _, i := range plan.Interfaces {
				if i.Pool != tc.pool {
					t.Errorf("%s from pool %s, want %s", i.Name, i.Pool, tc.pool)
				}
				if len(claims["default/pod-a"]) > 0 && tc.mode != api.ModeVF && !strings.Contains(i.Reason, "DRA claim") {
					t.Errorf("%s: reason %q", i.Name, i.Reason)
				}
			}
			again, err := svc.Allocate(context.Background(), req)
			if err != nil || !slices.Equal(nicsOf(again), nicsOf(plan)) {
				t.Fatalf("repeated ADD: %v %v", err, nicsOf(again))
			}
			if err := svc.Release(context.Background(), api.AttachmentRequest{Sandbox: "a", CNIIfName: "eth0", Network: "net"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func errDetails(err error) string {
	if e, ok := err.(*api.Error); ok {
		return e.Details
	}
	return ""
}
