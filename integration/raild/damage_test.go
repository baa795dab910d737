package raild

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestStoreDamagedUnderRaild overwrites a page of leases.db with 512 random
// bytes under a running raild process holding 20 leases (issue 20 H1, H2):
// the next ADD, every later ADD and DEL get an answer naming the damage and
// `raild recover` (not a closed connection, not a hang); STATUS says
// unhealthy; raild stops on SIGTERM; it refuses to start again on the
// damaged store instead of starting without a lease; `raild recover`
// rebuilds the store and raild starts.
func TestStoreDamagedUnderRaild(t *testing.T) {
	for _, page := range []string{"newest meta", "freelist"} {
		t.Run(page, func(t *testing.T) {
			r := newRaild(t, "10.9.0.0/24")
			r.start()
			ctx := context.Background()
			a := clientAllocator{c: r.client(), netns: r.netns}
			for i := range 20 {
				if _, err := a.add(ctx, fmt.Sprint("sb", i)); err != nil {
					t.Fatal(err)
				}
			}
			state := filepath.Join(r.dir, "state")
			store := filepath.Join(state, "leases.db")
			damagePage(t, store, page)

			for _, call := range []struct {
				name string
				run  func() error
			}{
				{"next ADD", func() error { _, err := a.add(ctx, "sb-next"); return err }},
				{"later ADD", func() error { _, err := a.add(ctx, "sb-later"); return err }},
				{"DEL", func() error { return a.del(ctx, "sb3") }},
			} {
				err := call.run()
				var apiErr *api.Error
				if !errors.As(err, &apiErr) || api.IsUnreachable(err) || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "raild recover") {
					t.Errorf("%s after the damage: %v, want an answer naming the damage and raild recover", call.name, err)
				}
			}
			if st, err := r.client().Status(ctx, ""); err != nil || st.Healthy || !strings.Contains(st.Reason, "damaged") {
				t.Errorf("STATUS after the damage: %+v, %v; want unhealthy, saying damaged", st, err)
			}
			r.stop() // fails the test if SIGTERM is ignored
			if err := r.raild.Start(); err == nil {
				t.Fatalf("raild started again on the damaged store: leases %v", r.mustLeases())
			}
			if log := r.logTail(5); !strings.Contains(log, "raild recover") {
				t.Errorf("restart refused without naming raild recover: %s", log)
			}
			netnsDir := filepath.Join(r.dir, "netns") // raild's: no pods here, so the rebuilt store is empty
			if err := os.MkdirAll(netnsDir, 0o700); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bins.raild, "recover", "--config", filepath.Join(r.dir, "raild.yaml"),
				"--state-dir", state, "--netns-dir", netnsDir, "--node-name", "node1").CombinedOutput()
			if err != nil {
				t.Fatalf("raild recover: %v\n%s", err, out)
			}
			r.start()
			if _, err := a.add(ctx, "sb-after"); err != nil {
				t.Errorf("ADD after the recovery: %v", err)
			}
		})
	}
}

// damagePage puts 512 random bytes at the start of the newest meta page or
// the freelist page it names (bbolt's meta: the freelist page at +48, the
// transaction id at +64).
func damagePage(t *testing.T, store, which string) {
	t.Helper()
	data, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	meta := 0
	if binary.NativeEndian.Uint64(data[ps+64:]) > binary.NativeEndian.Uint64(data[64:]) {
		meta = 1
	}
	page := meta
	if which == "freelist" {
		page = int(binary.NativeEndian.Uint64(data[meta*ps+48:]))
	}
	junk := make([]byte, 512)
	rng := rand.New(rand.NewPCG(20, uint64(page)))
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	f, err := os.OpenFile(store, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(junk, int64(page*ps)); err != nil {
		t.Fatal(err)
	}
}
