package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenStore opens random bytes as leases.db: an error naming the file,
// never a panic, and a store that opens holds only whole leases. Inputs of even length get
// a side record (commit 0) beside them, so both the checked format 2 path
// and the format 1 conversion are reached.
func FuzzOpenStore(f *testing.F) {
	fx := newStoreFixture(f, 40)
	ps := fx.pageSize(f)
	data := fx.file(f)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(data[:2*ps])
	f.Add(fx.older["leases.db"])
	for page := range len(data) / ps {
		f.Add(garbage(data, page, ps))
	}
	f.Add([]byte{})
	f.Add([]byte("not a bbolt file"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "leases.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if len(data)%2 == 0 {
			if err := os.WriteFile(seqPath(path), encodeSeq(0), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		st, c, err := Open(path, Options{})
		if err != nil {
			var damage *DamagedError
			if errors.As(err, &damage) && damage.Path != path && damage.Path != seqPath(path) {
				t.Errorf("DamagedError names %s, want %s", damage.Path, path)
			}
			return
		}
		defer st.Close()
		for _, l := range c.Leases {
			if l.Sandbox == "" || l.IfName == "" || !l.Address.IsValid() {
				t.Errorf("opened with a lease that is not whole: %+v", l)
			}
		}
	})
}
