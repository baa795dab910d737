package store

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
	fromPods := []Lease{
		testLease("sb1", netip.MustParsePrefix("10.8.0.5/22"), now),
		testLease("sb2", netip.MustParsePrefix("10.8.0.9/22"), now),
	}
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
			moved, err := Rebuild(path, fromPods, now)
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
			c, err := openNoPanic(t, path)
			if err != nil {
				t.Fatalf("Open after rebuild: %v", err)
			}
			if !sameLeases(c.Leases, fromPods) || len(c.Cooldowns) != 0 {
				t.Errorf("after rebuild: leases %v, cooldowns %v; want %v and none", c.Leases, c.Cooldowns, fromPods)
			}
		})
	}
}

func TestRebuildRefusesStoreInUse(t *testing.T) {
	fx := newStoreFixture(t, 5)
	st, _, err := Open(fx.path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := Rebuild(fx.path, nil, time.Now()); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Rebuild of an open store = %v, want in use", err)
	}
	commit(t, st, func(s *Session) error {
		return s.PutLease(testLease("sb9", netip.MustParsePrefix("10.8.2.1/22"), time.Now()))
	})
}
