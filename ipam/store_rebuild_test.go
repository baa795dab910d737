package ipam

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRebuild(t *testing.T) {
	now := time.Date(2026, 11, 22, 16, 0, 0, 0, time.UTC)
	pools := mustPools(t, damagePools, "n1")
	fromPods := []Lease{storedLease("sb1", "p", "10.8.0.5/22"), storedLease("sb2", "p", "10.8.0.9/22")}
	tests := []struct {
		name   string
		before func(t *testing.T, dir string) // the state directory before the rebuild
	}{
		{"damaged store", func(t *testing.T, dir string) {
			fx := newStoreFixture(t, 20).copyTo(t, dir)
			fx.write(t, garbage(fx.file(t), fx.lastMetaPage(t), fx.pageSize(t)))
		}},
		{"empty store", func(t *testing.T, dir string) {
			fx := newStoreFixture(t, 5).copyTo(t, dir)
			fx.write(t, nil)
		}},
		{"side record only", func(t *testing.T, dir string) {
			fx := newStoreFixture(t, 5).copyTo(t, dir)
			os.Remove(fx.path)
		}},
		{"nothing", func(*testing.T, string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "leases.db")
			tt.before(t, dir)
			before := readDir(t, dir)
			moved, err := Rebuild(path, pools, fromPods, now)
			if err != nil {
				t.Fatalf("Rebuild: %v", err)
			}
			if len(moved) != len(before) {
				t.Errorf("moved aside %v, want the %d files that were there", moved, len(before))
			}
			for _, m := range moved {
				data, err := os.ReadFile(m)
				if orig := before[strings.Split(filepath.Base(m), ".damaged-")[0]]; err != nil || !bytes.Equal(data, orig) {
					t.Errorf("%s: not the old file unchanged (%v)", m, err)
				}
			}
			a := reopen(t, path, pools, Options{})
			if got := a.Leases(); !sameLeases(got, fromPods) {
				t.Errorf("leases after rebuild %v, want %v", got, fromPods)
			}
			if l, err := a.Allocate(request("new", "rail0", "p")); err != nil || l.Address.Addr().String() == "10.8.0.5" || l.Address.Addr().String() == "10.8.0.9" {
				t.Errorf("allocation after rebuild: %v, %v; want an address no pod holds", l.Address, err)
			}
		})
	}
}

func TestRebuildRefuses(t *testing.T) {
	pools := mustPools(t, damagePools, "n1")
	now := time.Now()
	t.Run("store in use", func(t *testing.T) {
		a, path := openTest(t, pools, Options{})
		_, err := Rebuild(path, pools, nil, now)
		if err == nil || !strings.Contains(err.Error(), "in use") {
			t.Fatalf("Rebuild of an open store = %v, want in use", err)
		}
		if _, err := a.Allocate(request("sb1", "rail0", "p")); err != nil {
			t.Errorf("the open store was disturbed: %v", err)
		}
	})
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
			fx := newStoreFixture(t, 5)
			before := readDir(t, fx.dir)
			_, err := Rebuild(fx.path, pools, tt.leases, now)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Rebuild = %v, want %q", err, tt.want)
			}
			after := readDir(t, fx.dir)
			if len(after) != len(before) || !bytes.Equal(after["leases.db"], before["leases.db"]) {
				t.Errorf("a refused rebuild changed the state directory: %d files, was %d", len(after), len(before))
			}
		})
	}
}
