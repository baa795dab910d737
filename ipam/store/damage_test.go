package store

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestOpenDamagedStore damages a lease file in the ways disks and people
// damage files: each must be refused at open with an error naming the file,
// never a panic, never a store that silently lost or doubled a lease.
func TestOpenDamagedStore(t *testing.T) {
	base := newStoreFixture(t, 120)
	ps := base.pageSize(t)
	last := base.lastMetaPage(t)
	tests := []struct {
		name   string
		damage func(t *testing.T, fx *storeFixture)
		want   string // in the error
	}{
		{"empty file", func(t *testing.T, fx *storeFixture) { fx.write(t, nil) }, "empty"},
		{"half size", func(t *testing.T, fx *storeFixture) {
			data := fx.file(t)
			fx.write(t, data[:len(data)/2])
		}, "truncated"},
		{"garbage over the meta page of the last commit", func(t *testing.T, fx *storeFixture) {
			fx.write(t, garbage(fx.file(t), last, ps))
		}, "rolled back"},
		{"garbage over the other meta page", func(t *testing.T, fx *storeFixture) {
			fx.write(t, garbage(fx.file(t), 1-last, ps))
		}, "meta page"},
		{"garbage over both meta pages", func(t *testing.T, fx *storeFixture) {
			fx.write(t, garbage(garbage(fx.file(t), 0, ps), 1, ps))
		}, "damaged"},
		{"garbage over a page of leases", func(t *testing.T, fx *storeFixture) {
			data := fx.file(t)
			fx.write(t, garbage(data, pageOf(t, data, `"sandbox":"sb-040"`, ps), ps))
		}, "damaged"},
		{"older copy put back", func(t *testing.T, fx *storeFixture) {
			fx.write(t, fx.older["leases.db"])
		}, "rolled back"},
		{"address rewritten to another lease's", func(t *testing.T, fx *storeFixture) {
			fx.write(t, rewriteAddress(t, fx.file(t), "10.8.0.11/22", "10.8.0.10/22"))
		}, "damaged"},
		{"address rewritten to a free one", func(t *testing.T, fx *storeFixture) {
			fx.write(t, rewriteAddress(t, fx.file(t), "10.8.0.11/22", "10.8.3.99/22"))
		}, "damaged"},
		{"file removed", func(t *testing.T, fx *storeFixture) {
			if err := os.Remove(fx.path); err != nil {
				t.Fatal(err)
			}
		}, "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := base.copyTo(t, t.TempDir())
			tt.damage(t, fx)
			c, err := openNoPanic(t, fx.path)
			if err == nil {
				t.Fatalf("Open of a damaged store succeeded with %d leases (had %d)", len(c.Leases), len(base.leases))
			}
			if msg := err.Error(); !strings.Contains(msg, fx.path) || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q: want the file %s and %q in it", msg, fx.path, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line", err)
			}
		})
	}
}

// TestEverySinglePageDamage puts garbage over each page of a lease file in
// turn: Open never panics, and either refuses the file or returns exactly
// the leases it held (garbage over a free page changes nothing).
func TestEverySinglePageDamage(t *testing.T) {
	base := newStoreFixture(t, 120)
	ps := base.pageSize(t)
	data := base.file(t)
	refused := 0
	for page := range len(data) / ps {
		fx := base.copyTo(t, t.TempDir())
		fx.write(t, garbage(data, page, ps))
		c, err := openNoPanic(t, fx.path)
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				t.Errorf("page %d: error %v is not a DamagedError", page, err)
			}
			refused++
			continue
		}
		if !sameLeases(c.Leases, base.leases) {
			t.Errorf("page %d: opened with %d leases, not the %d it held", page, len(c.Leases), len(base.leases))
		}
	}
	t.Logf("%d of %d pages refused when damaged", refused, len(data)/ps)
	if refused == 0 {
		t.Error("no damaged page was refused")
	}
}

// TestSideRecord covers the side record: a store ahead of it (a crash
// between the commit and the side record's write) opens, a damaged or
// missing side record refuses the store.
func TestSideRecord(t *testing.T) {
	base := newStoreFixture(t, 10)
	side, _, err := readSeq(seqPath(base.path))
	if err != nil || side == 0 {
		t.Fatalf("side record: %d, %v", side, err)
	}
	tests := []struct {
		name   string
		record []byte // nil: remove it
		want   string // "" : opens with all leases
	}{
		{"store one commit ahead", encodeSeq(side - 1), ""},
		{"store far ahead", encodeSeq(0), ""},
		{"side record ahead", encodeSeq(side + 1), "rolled back"},
		{"side record damaged", append(encodeSeq(side)[:seqRecordLen-1], 0), "damaged side record"},
		{"side record empty", []byte{}, "damaged side record"},
		{"side record removed", nil, "side record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := base.copyTo(t, t.TempDir())
			var err error
			if tt.record == nil {
				err = os.Remove(seqPath(fx.path))
			} else {
				err = os.WriteFile(seqPath(fx.path), tt.record, 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			c, err := openNoPanic(t, fx.path)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if len(c.Leases) != len(base.leases) {
					t.Errorf("%d leases, want %d", len(c.Leases), len(base.leases))
				}
				return
			}
			if err == nil {
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q: want a DamagedError with %q", err, tt.want)
			}
		})
	}
}
