package service

import (
	"context"
	"testing"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// TestVFPerGPU: two GPUs sent to one PF share a VF unless the netconf's
// vfPerGPU, else the named pool's, asks for one each; the key is refused
// outside vf mode.
func TestVFPerGPU(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name     string
		pool     *bool // the pool's vfPerGPU
		named    bool  // the request names the pool
		netconf  *bool
		mode     api.Mode
		wantVFs  int
		wantCode uint
	}{
		{name: "default: one VF for the PF", named: true, wantVFs: 1},
		{name: "netconf asks", netconf: &yes, wantVFs: 2},
		{name: "named pool asks", pool: &yes, named: true, wantVFs: 2},
		{name: "netconf false over the pool's true", pool: &yes, named: true, netconf: &no, wantVFs: 1},
		{name: "netconf true over the pool's false", pool: &no, named: true, netconf: &yes, wantVFs: 2},
		{name: "a pool the request does not name does not decide", pool: &yes, wantVFs: 1},
		{name: "refused outside vf mode", netconf: &yes, mode: api.ModeMove, wantCode: api.CodeInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(t, "h100x8-cx7x8-sriov", []ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/24", VFPerGPU: tt.pool}}, nil)
			req := allocReq("a", "0,1")
			req.Mode, req.VFPerGPU, req.Selector.NICs = api.ModeVF, tt.netconf, []string{"mlx5_0"}
			if tt.mode != "" {
				req.Mode = tt.mode
			}
			if tt.named {
				req.Pool = "rail"
			}
			plan, err := svc.Allocate(context.Background(), req)
			if tt.wantCode != 0 {
				if !api.IsCode(err, tt.wantCode) || len(svc.SandboxLeases("a")) != 0 {
					t.Fatalf("got %v, want code %d and no lease", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Interfaces) != tt.wantVFs {
				t.Fatalf("%d interfaces, want %d: %+v", len(plan.Interfaces), tt.wantVFs, plan.Interfaces)
			}
			seen := map[string]bool{}
			for _, iface := range plan.Interfaces {
				if iface.VF == nil || seen[iface.VF.PCI] {
					t.Fatalf("interface %+v: want a VF of its own", iface)
				}
				seen[iface.VF.PCI] = true
			}
		})
	}
}

// TestPlanCarriesPoolVFSettings: a vf plan's VF carries its pool's VF
// settings, parsed, for the plugin to apply under the netconf's keys; a
// pool without any sends none.
func TestPlanCarriesPoolVFSettings(t *testing.T) {
	vlan, rate := 100, int64(500)
	pools := []ipam.PoolConfig{
		{Name: "tagged", Subnet: "10.77.0.0/24", PoolVF: ipam.PoolVF{VLAN: &vlan, Spoofchk: "off", LinkState: "enable", MaxTxRate: &rate}},
		{Name: "plain", Subnet: "10.78.0.0/24"},
	}
	svc, _ := newService(t, "h100x8-cx7x8-sriov", pools, nil)
	for _, tt := range []struct {
		pool string
		want func(*api.VFConfig) bool
	}{
		{pool: "tagged", want: func(c *api.VFConfig) bool {
			return c != nil && *c.VLAN == 100 && !*c.Spoofchk && *c.LinkState == api.VFLinkEnable && *c.MaxTxRate == 500 &&
				c.Trust == nil && c.MinTxRate == nil && c.MAC == nil
		}},
		{pool: "plain", want: func(c *api.VFConfig) bool { return c == nil }},
	} {
		req := allocReq("sb-"+tt.pool, "0")
		req.Mode, req.Pool = api.ModeVF, tt.pool
		plan, err := svc.Allocate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := plan.Interfaces[0].VF.PoolConfig; !tt.want(got) {
			t.Fatalf("pool %s: plan's VF settings %+v", tt.pool, got)
		}
		again, err := svc.Check(context.Background(), api.AttachmentRequest{Sandbox: req.Sandbox, CNIIfName: req.CNIIfName, Network: req.Network})
		if err != nil || !tt.want(again.Interfaces[0].VF.PoolConfig) {
			t.Fatalf("pool %s: CHECK's plan %+v, %v: want the same settings", tt.pool, again, err)
		}
	}
}
