package ipam

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRebuildThenAllocate: the rebuilt leases hold their addresses.
func TestRebuildThenAllocate(t *testing.T) {
	pools := mustPools(t, damagePools, "n1")
	path := filepath.Join(t.TempDir(), "leases.db")
	fromPods := []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "p", "10.8.0.9/22")}
	if _, err := Rebuild(path, pools, fromPods, time.Now()); err != nil {
		t.Fatal(err)
	}
	a := reopen(t, path, pools, Options{})
	if got := a.Leases(); len(got) != 2 {
		t.Fatalf("leases after rebuild %v, want %v", got, fromPods)
	}
	for i := range 10 {
		l, err := a.Allocate(request(fmt.Sprint("new", i), "rail0", "p"))
		if err != nil || l.Address.Addr().String() == "10.8.0.5" || l.Address.Addr().String() == "10.8.0.9" {
			t.Fatalf("allocation after rebuild: %v, %v; want an address no pod holds", l.Address, err)
		}
	}
}

func TestRebuildRefuses(t *testing.T) {
	pools := mustPools(t, damagePools, "n1")
	for _, tt := range []struct {
		name   string
		leases []Lease
		want   string
	}{
		{"address twice", []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "p", "10.8.0.5/22")}, "leased twice"},
		{"key twice", []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb1", "p", "10.8.0.6/22")}, "two leases"},
		{"outside the pool", []Lease{storedLease("sb1", "p", "10.9.0.5/22")}, "outside pool"},
		{"no sandbox", []Lease{{IfName: "rail0", Pool: "p", Address: netip.MustParsePrefix("10.8.0.5/22")}}, "sandbox"},
		{"no address", []Lease{{Sandbox: "sb1", IfName: "rail0", Pool: "p"}}, "address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, path := openTest(t, pools, Options{})
			kept, err := a.Allocate(request("sb0", "rail0", "p"))
			if err != nil {
				t.Fatal(err)
			}
			a.Close()
			if _, err := Rebuild(path, pools, tt.leases, time.Now()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Rebuild = %v, want %q", err, tt.want)
			}
			b := reopen(t, path, pools, Options{})
			if got := b.Leases(); len(got) != 1 || got[0].Address != kept.Address {
				t.Errorf("a refused rebuild changed the store: %v, want only %v", got, kept)
			}
		})
	}
}
