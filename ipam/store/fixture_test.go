package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// storeFixture is a lease file with leases and cooldowns, closed, plus an
// older copy of it taken before the last allocations.
type storeFixture struct {
	dir    string
	path   string
	older  map[string][]byte // file name → content, before the last commits
	leases []Lease
}

// newStoreFixture writes n leases as the allocator would (one session
// each, consecutive addresses of 10.8.0.0/22), releasing every third into
// a cooldown, and keeps a copy of the state directory taken halfway.
func newStoreFixture(t testing.TB, n int) *storeFixture {
	t.Helper()
	dir := t.TempDir()
	fx := &storeFixture{dir: dir, path: filepath.Join(dir, "leases.db")}
	st, _, err := Open(fx.path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	addr := netip.MustParseAddr("10.8.0.0")
	for i := range n {
		addr = addr.Next()
		l := testLease(fmt.Sprintf("sb-%03d", i), netip.PrefixFrom(addr, 22), at.Add(time.Duration(i)*time.Second))
		commit(t, st, func(s *Session) error { return s.PutLease(l) })
		if i%3 == 2 {
			commit(t, st, func(s *Session) error {
				s.DeleteLease(l.Key())
				return s.PutCooldown(Cooldown{Addr: addr, Pool: l.Pool, Released: l.Created})
			})
		} else {
			fx.leases = append(fx.leases, l)
		}
		if i == n/2 {
			fx.older = readDir(t, dir)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return fx
}

func testLease(sandbox string, addr netip.Prefix, created time.Time) Lease {
	return Lease{Sandbox: sandbox, IfName: "rail0", CNIIfName: "eth0", Network: "railnet", Pool: "p",
		Address: addr, NICs: []string{"mlx5_0"}, Mode: "macvlan", PodNamespace: "ns", PodName: "pod-" + sandbox,
		Created: created}
}

// commit runs change in a session of its own and commits it.
func commit(t testing.TB, st *Store, change func(*Session) error) {
	t.Helper()
	ses := st.Begin()
	if err := change(ses); err != nil {
		ses.Cancel()
		t.Fatal(err)
	}
	if err := ses.Commit(); err != nil {
		t.Fatal(err)
	}
}

// openNoPanic opens the store and turns a panic into a test failure with
// the value, so a table goes on with the next case. The store is closed
// at the end of the test.
func openNoPanic(t *testing.T, path string) (c *Contents, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("Open panicked: %v", r)
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	st, c, err := Open(path, Options{})
	if err == nil {
		t.Cleanup(func() { st.Close() })
	}
	return c, err
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

// boltFacts reads, with bbolt, the page size and the last transaction id.
func (fx *storeFixture) boltFacts(t testing.TB) (pageSize, txid int) {
	t.Helper()
	db, err := bolt.Open(fx.path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error { txid = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return db.Info().PageSize, txid
}

func (fx *storeFixture) pageSize(t testing.TB) int {
	ps, _ := fx.boltFacts(t)
	return ps
}

// lastMetaPage is the meta page (0 or 1) bbolt wrote with the last commit.
func (fx *storeFixture) lastMetaPage(t testing.TB) int {
	_, txid := fx.boltFacts(t)
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

// sameLeases compares leases as stored (JSON), ignoring monotonic clocks.
func sameLeases(a, b []Lease) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}
