package chaos

import (
	"errors"
	"strings"
	"testing"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// TestJudgeLeases proves the checker used after each restart catches each
// way raild could be wrong, and tells strays before GC from leaks after.
func TestJudgeLeases(t *testing.T) {
	move := &kind{name: "move", podIf: "rail0", exclusive: true}
	ipamKind := &kind{name: "ipam", podIf: "net1"}
	rec := func(sandbox, addr string, k *kind) *podRec {
		return &podRec{spec: podSpec{name: "pod-" + sandbox, kind: k, pool: "prefill"}, pod: &harness.Pod{Sandbox: sandbox}, addr: addr}
	}
	lease := func(sandbox, addr, ifName string, nics ...string) api.Lease {
		return api.Lease{Sandbox: sandbox, Address: addr, IfName: ifName, Pool: "prefill", NICs: nics}
	}
	a, b := rec("a", "10.100.0.1/22", move), rec("b", "10.100.0.2/22", ipamKind)
	tests := []struct {
		name       string
		live       []*podRec
		leases     []api.Lease
		strict     bool
		wantErr    string // "" for none
		wantStrays int
	}{
		{name: "consistent", live: []*podRec{a, b}, strict: true,
			leases: []api.Lease{lease("a", "10.100.0.1/22", "rail0", "mlx5_0"), lease("b", "10.100.0.2/22", "net1")}},
		{name: "stray before GC", live: []*podRec{a}, wantStrays: 1,
			leases: []api.Lease{lease("a", "10.100.0.1/22", "rail0", "mlx5_0"), lease("gone", "10.100.0.9/22", "rail0", "mlx5_1")}},
		{name: "stray after GC", live: []*podRec{a}, strict: true, wantErr: "survived CNI GC", wantStrays: 1,
			leases: []api.Lease{lease("a", "10.100.0.1/22", "rail0", "mlx5_0"), lease("gone", "10.100.0.9/22", "rail0", "mlx5_1")}},
		{name: "duplicate address", live: []*podRec{a}, wantErr: "leased to both", wantStrays: 1,
			leases: []api.Lease{lease("a", "10.100.0.1/22", "rail0", "mlx5_0"), lease("gone", "10.100.0.1/22", "net1")}},
		{name: "lost lease", live: []*podRec{a, b}, wantErr: "lost lease",
			leases: []api.Lease{lease("a", "10.100.0.1/22", "rail0", "mlx5_0")}},
		{name: "other address", live: []*podRec{a}, wantErr: "its lease says 10.100.0.7/22",
			leases: []api.Lease{lease("a", "10.100.0.7/22", "rail0", "mlx5_0")}},
		{name: "other pool", live: []*podRec{a}, wantErr: "asked for pool prefill",
			leases: []api.Lease{{Sandbox: "a", Address: "10.100.0.1/22", IfName: "rail0", Pool: "decode", NICs: []string{"mlx5_0"}}}},
		{name: "other interface", live: []*podRec{b}, wantErr: `want "net1"`,
			leases: []api.Lease{lease("b", "10.100.0.2/22", "eth0")}},
		{name: "move lease without its NIC", live: []*podRec{a}, wantErr: "want exactly one",
			leases: []api.Lease{lease("a", "10.100.0.1/22", "rail0")}},
		{name: "two leases for one pod", live: []*podRec{a}, wantErr: "holds 2 leases",
			leases: []api.Lease{lease("a", "10.100.0.1/22", "rail0", "mlx5_0"), lease("a", "10.100.0.1/22", "rail0", "mlx5_0")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, strays := judgeLeases(tt.leases, tt.live, tt.strict)
			err := errors.Join(errs...)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("judge found %v in a consistent state", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("judge = %v, want an error mentioning %q", err, tt.wantErr)
			}
			if strays != tt.wantStrays {
				t.Fatalf("judge counted %d strays, want %d", strays, tt.wantStrays)
			}
		})
	}
}
