package ipam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

var damagePools = []PoolConfig{{Name: "p", Subnet: "10.8.0.0/22"}}

// storeFixture is a lease file with leases and cooldowns, closed, plus an
// older copy of it taken before the last allocations.
type storeFixture struct {
	dir    string
	path   string
	older  map[string][]byte // file name → content, before the last commits
	leases []Lease
}

// newStoreFixture allocates n leases (releasing every third, with a
// cooldown) and keeps a copy of the state directory taken halfway.
func newStoreFixture(t testing.TB, n int) *storeFixture {
	t.Helper()
	dir := t.TempDir()
	fx := &storeFixture{dir: dir, path: filepath.Join(dir, "leases.db")}
	pools := mustPools(t, damagePools, "n1")
	a, err := Open(fx.path, pools, Options{Cooldown: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		sb := fmt.Sprintf("sb-%03d", i)
		if _, err := a.Allocate(request(sb, "rail0", "p")); err != nil {
			t.Fatal(err)
		}
		if i%3 == 2 {
			if _, err := a.Release(sb, "eth0", "railnet"); err != nil {
				t.Fatal(err)
			}
		}
		if i == n/2 {
			fx.older = readDir(t, dir)
		}
	}
	fx.leases = a.Leases()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return fx
}

// readDir returns the content of every file in dir.
func readDir(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	return out
}

func (fx *storeFixture) pageSize(t testing.TB) int {
	t.Helper()
	db, err := bolt.Open(fx.path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return db.Info().PageSize
}

// lastMetaPage is the meta page (0 or 1) bbolt wrote with the last commit.
func (fx *storeFixture) lastMetaPage(t testing.TB) int {
	t.Helper()
	db, err := bolt.Open(fx.path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var txid int
	if err := db.View(func(tx *bolt.Tx) error { txid = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return txid % 2
}

func (fx *storeFixture) file(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (fx *storeFixture) write(t testing.TB, data []byte) {
	t.Helper()
	if err := os.WriteFile(fx.path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// garbage fills page n of data with bytes that are nothing bbolt wrote.
func garbage(data []byte, page, pageSize int) []byte {
	out := bytes.Clone(data)
	for i := page * pageSize; i < (page+1)*pageSize && i < len(out); i++ {
		out[i] = byte(i*131 + 7)
	}
	return out
}

// pageOf returns the page holding the first occurrence of marker.
func pageOf(t testing.TB, data []byte, marker string, pageSize int) int {
	t.Helper()
	i := bytes.Index(data, []byte(marker))
	if i < 0 {
		t.Fatalf("%q not in the file", marker)
	}
	return i / pageSize
}

// rewriteAddress replaces the address of lease sb in the file with to, a
// string of the same length, without touching anything else.
func rewriteAddress(t testing.TB, data []byte, from, to string) []byte {
	t.Helper()
	if len(from) != len(to) {
		t.Fatalf("rewrite %s to %s: lengths differ", from, to)
	}
	old := []byte(`"address":"` + from + `"`)
	if bytes.Count(data, old) != 1 {
		t.Fatalf("%s occurs %d times in the file, want once", old, bytes.Count(data, old))
	}
	return bytes.Replace(data, old, []byte(`"address":"`+to+`"`), 1)
}

// openNoPanic opens the allocator and turns a panic into a test failure
// with the value, so the table goes on with the next case.
func openNoPanic(t *testing.T, path string) (a *Allocator, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("Open panicked: %v", r)
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return Open(path, mustPools(t, damagePools, "n1"), Options{Cooldown: time.Hour})
}

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
			a, err := openNoPanic(t, fx.path)
			if err == nil {
				a.Close()
				t.Fatalf("Open of a damaged store succeeded with %d leases (had %d)", len(a.Leases()), len(base.leases))
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

// copyTo copies the fixture's state directory into dir.
func (fx *storeFixture) copyTo(t testing.TB, dir string) *storeFixture {
	t.Helper()
	for name, data := range readDir(t, fx.dir) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &storeFixture{dir: dir, path: filepath.Join(dir, "leases.db"), older: fx.older, leases: fx.leases}
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
		a, err := openNoPanic(t, fx.path)
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				t.Errorf("page %d: error %v is not a DamagedError", page, err)
			}
			refused++
			continue
		}
		if got := a.Leases(); !sameLeases(got, base.leases) {
			t.Errorf("page %d: opened with %d leases, not the %d it held", page, len(got), len(base.leases))
		}
		a.Close()
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
			a, err := openNoPanic(t, fx.path)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer a.Close()
				if len(a.Leases()) != len(base.leases) {
					t.Errorf("%d leases, want %d", len(a.Leases()), len(base.leases))
				}
				return
			}
			if err == nil {
				a.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q: want a DamagedError with %q", err, tt.want)
			}
		})
	}
}

// sameLeases compares leases as stored (JSON), ignoring monotonic clocks.
func sameLeases(a, b []Lease) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}
