package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

// overwrite puts 512 random bytes at the start of page n of the open file,
// as a stray writer or a failing disk would while raild runs.
func overwrite(t *testing.T, path string, page, pageSize int, seed uint64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, 512)
	rng := rand.New(rand.NewPCG(seed, uint64(page)))
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	if _, err := f.WriteAt(junk, int64(page*pageSize)); err != nil {
		t.Fatal(err)
	}
}

// newestMeta returns the meta page (0 or 1) of the last commit and the
// freelist page it names, read from the file.
func newestMeta(t *testing.T, path string, pageSize int) (meta, freelist int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	txid := func(i int) uint64 { return binary.NativeEndian.Uint64(data[i*pageSize+metaTxidAt:]) }
	if txid(1) > txid(0) {
		meta = 1
	}
	return meta, int(binary.NativeEndian.Uint64(data[meta*pageSize+metaFreelistAt:]))
}

// writeOrTimeout commits a session that adds a lease, releases another into
// a cooldown and purges nothing, and reports a panic or a write that does
// not return within a minute as a test failure.
func writeOrTimeout(t *testing.T, st *Store, add Lease, release Key) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		ses := st.Begin()
		if err := ses.PutLease(add); err != nil {
			done <- err
			return
		}
		ses.DeleteLease(release)
		if err := ses.PutCooldown(Cooldown{Addr: add.Address.Addr().Next(), Pool: "p", Released: add.Created}); err != nil {
			done <- err
			return
		}
		done <- ses.Commit()
	}()
	select {
	case err := <-done:
		if err != nil && strings.HasPrefix(err.Error(), "panic") {
			t.Fatalf("the write panicked: %v", err)
		}
		return err
	case <-time.After(time.Minute):
		t.Fatal("the write did not return within a minute")
		return nil
	}
}

// TestDamageWhileOpen overwrites each page of an open store in turn, the
// newest meta page and the freelist page first, then writes: never a
// panic or a hang; a damaged page the write needs makes the write fail
// as damaged, and then the store stays damaged (Health says so, every
// later write is refused) and closes at once; reopened, the store is
// refused, or holds every lease a write acknowledged — never a store that
// lost one and would hand its address out again.
func TestDamageWhileOpen(t *testing.T) {
	base := newStoreFixture(t, 120)
	ps := base.pageSize(t)
	pages := len(base.file(t)) / ps
	meta, freelist := newestMeta(t, base.path, ps)
	type target struct {
		name string
		page int
		want string // in the write's error; "" : any outcome but a panic, a hang or a lost lease
	}
	targets := []target{
		{"newest meta page", meta, "rolled back while raild ran"},
		{"older meta page", 1 - meta, ""},
		{"freelist page of the newest commit", freelist, "freelist page"},
	}
	for page := 2; page < pages; page++ {
		if page != freelist {
			targets = append(targets, target{fmt.Sprintf("page %d", page), page, ""})
		}
	}
	refused := 0
	for _, tt := range targets {
		t.Run(tt.name, func(t *testing.T) {
			fx := base.copyTo(t, t.TempDir())
			st, _, err := Open(fx.path, Options{DamagedHint: "run the fix"})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					st.Close()
				}
			}()
			acked := map[Key]Lease{}
			for _, l := range fx.leases {
				acked[l.Key()] = l
			}
			overwrite(t, fx.path, tt.page, ps, 1)
			add := testLease("sb-new", netip.MustParsePrefix("10.8.3.1/22"), time.Now().UTC())
			release := fx.leases[3].Key()
			err = writeOrTimeout(t, st, add, release)
			switch {
			case err == nil && tt.want != "":
				t.Fatalf("the write succeeded, want an error with %q", tt.want)
			case err == nil:
				acked[add.Key()] = add
				delete(acked, release)
			case !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "run the fix"):
				t.Fatalf("write error %q: want a DamagedError with %q and the hint", err, tt.want)
			default:
				refused++
				if h := st.Health(); !errors.Is(h, ErrDamaged) {
					t.Errorf("Health after the damage = %v, want the damage", h)
				}
				if err2 := writeOrTimeout(t, st, testLease("sb-later", netip.MustParsePrefix("10.8.3.9/22"), time.Now()), release); !errors.Is(err2, ErrDamaged) {
					t.Errorf("a later write = %v, want refused as damaged", err2)
				}
			}
			start := time.Now()
			st.Close()
			closed = true
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Close took %s", d)
			}
			c, err := openNoPanic(t, fx.path)
			if err != nil {
				if !errors.Is(err, ErrDamaged) {
					t.Errorf("reopen: %v, want a DamagedError", err)
				}
				return
			}
			got := map[Key]bool{}
			for _, l := range c.Leases {
				got[l.Key()] = true
			}
			for k := range acked {
				if !got[k] {
					t.Errorf("reopened without the acknowledged lease %v (%d leases, %d acknowledged)", k, len(c.Leases), len(acked))
				}
			}
		})
	}
	t.Logf("%d of %d damaged pages refused the write", refused, len(targets))
}
