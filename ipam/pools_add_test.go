package ipam

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestPoolsAdd(t *testing.T) {
	base := []PoolConfig{{Name: "prefill", Subnet: "10.1.0.0/24", Gateway: "10.1.0.1"}}
	tests := []struct {
		name    string
		add     PoolConfig
		wantErr string
	}{
		{name: "a node's block", add: PoolConfig{Name: "decode", Subnet: "10.2.0.0/16", Nodes: []NodeSlice{{Node: "n1", Subnet: "10.2.3.0/24"}}}},
		{name: "name taken", add: PoolConfig{Name: "prefill", Subnet: "10.2.0.0/16"},
			wantErr: `railpool "prefill": spec.name "prefill": a pool of this name exists on this node`},
		{name: "overlap", add: PoolConfig{Name: "decode", Subnet: "10.1.0.128/25"},
			wantErr: `railpool "decode": spec: pools[0] "prefill" and pools[1] "decode": both hand out 10.1.0.129-10.1.0.254`},
		{name: "invalid", add: PoolConfig{Name: "decode", Subnet: "10.2.0.0/16", Gateway: "10.3.0.1"},
			wantErr: `railpool "decode": spec.gateway "10.3.0.1": outside subnet`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools := mustPools(t, base, "n1")
			a, _ := openTest(t, pools, Options{})
			err := pools.Add(tt.add, fmt.Sprintf("railpool %q: spec", tt.add.Name))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Add = %v, want %q", err, tt.wantErr)
				}
				if got := strings.Join(pools.Names(), ","); got != "prefill" {
					t.Errorf("pools after a refused Add: %s, want prefill only", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			l, err := a.Allocate(request("sb1", "rail0", "decode"))
			if err != nil || l.Address.Addr().String() != "10.2.3.0" {
				t.Fatalf("allocate from the added pool: %v, %v; want 10.2.3.0 (first of the block)", l, err)
			}
			if st := a.Stats(); len(st) != 2 || st[1].Name != "decode" || st[1].Size != 256 || st[1].Used != 1 {
				t.Errorf("stats = %+v, want decode with 256 addresses, 1 used", st)
			}
		})
	}
}

// TestPoolsAddWhileAllocating: pools added while allocations run (-race).
func TestPoolsAddWhileAllocating(t *testing.T) {
	pools := mustPools(t, []PoolConfig{{Name: "p0", Subnet: "10.0.0.0/24"}}, "n1")
	a, _ := openTest(t, pools, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 1; i <= 8; i++ {
		wg.Go(func() {
			name := fmt.Sprintf("p%d", i)
			if err := pools.Add(PoolConfig{Name: name, Subnet: fmt.Sprintf("10.0.%d.0/24", i)}, name); err != nil {
				errs <- err
				return
			}
			if _, err := a.Allocate(request("sb"+name, "rail0", name)); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			if _, err := a.Allocate(request(fmt.Sprintf("sb0-%d", i), "rail0", "p0")); err != nil {
				errs <- err
			}
			_ = a.Stats()
		})
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if err := errors.Join(all...); err != nil {
		t.Fatal(err)
	}
	if n := len(pools.List()); n != 9 {
		t.Errorf("%d pools, want 9", n)
	}
}
