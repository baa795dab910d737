package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/statedir"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// bboltPageSize is the page size bbolt gives a new file: the system's.
var bboltPageSize = os.Getpagesize()

// overwritePage puts 512 random bytes at the start of page n of the file.
func overwritePage(t *testing.T, path string, page int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, 512)
	rng := rand.New(rand.NewPCG(20, uint64(page)))
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	if _, err := f.WriteAt(junk, int64(page*bboltPageSize)); err != nil {
		t.Fatal(err)
	}
}

// newestMetaAndFreelist reads, from bbolt's meta pages (page 0 and 1: the
// transaction id at +64, the freelist page at +48), which one the last
// commit wrote and the freelist page it names.
func newestMetaAndFreelist(t *testing.T, path string) (meta, freelist int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	txid := func(i int) uint64 { return binary.NativeEndian.Uint64(data[i*bboltPageSize+64:]) }
	if txid(1) > txid(0) {
		meta = 1
	}
	return meta, int(binary.NativeEndian.Uint64(data[meta*bboltPageSize+48:]))
}

// TestLeaseStoreDamagedWhileServing overwrites pages of the lease file
// under a serving raild (service and socket API in process, the store
// opened as serve opens it) with 20 leases held (issue 20 H1, H2): the next
// ADD gets a clear error naming the damage and `raild recover`,
// not a closed connection; so does every later ADD and DEL; STATUS and
// /readyz say unhealthy; a restart refuses the store instead of starting
// without the lease it lost; the recovery rebuilds it and no address is
// handed out twice.
func TestLeaseStoreDamagedWhileServing(t *testing.T) {
	for _, page := range []string{"newest meta", "freelist"} {
		t.Run(page, func(t *testing.T) {
			ctx := context.Background()
			cfg := &config.Config{StateDir: t.TempDir()}
			store := filepath.Join(cfg.StateDir, "leases.db")
			pools := testPools(t)
			alloc, err := statedir.OpenLeaseStore(cfg, pools, nil)
			if err != nil {
				t.Fatal(err)
			}
			f := startServerWith(t, alloc, nil)
			held := map[string]string{} // sandbox → address
			add := func(sb string) (*api.Plan, error) {
				return f.client.Allocate(ctx, api.AllocateRequest{Sandbox: sb, CNIIfName: "net1", Network: "n", Mode: api.ModeIPAM, Pool: "p"})
			}
			for i := range 20 {
				sb := fmt.Sprint("sb", i)
				plan, err := add(sb)
				if err != nil {
					t.Fatal(err)
				}
				held[sb] = plan.Interfaces[0].Addresses[0].CIDR
			}
			meta, freelist := newestMetaAndFreelist(t, store)
			target := map[string]int{"newest meta": meta, "freelist": freelist}[page]
			overwritePage(t, store, target)

			for _, call := range []struct {
				name string
				run  func() error
			}{
				{"next ADD", func() error { _, err := add("sb-next"); return err }},
				{"later ADD", func() error { _, err := add("sb-later"); return err }},
				{"DEL", func() error {
					return f.client.Release(ctx, api.AttachmentRequest{Sandbox: "sb3", CNIIfName: "net1", Network: "n"})
				}},
			} {
				err := call.run()
				var apiErr *api.Error
				if !errors.As(err, &apiErr) || api.IsUnreachable(err) || !strings.Contains(err.Error(), "damaged") ||
					!strings.Contains(err.Error(), "raild recover") {
					t.Errorf("%s after the damage: %v, want a clear error naming the damage and raild recover", call.name, err)
				}
			}
			st, err := f.client.Status(ctx, "")
			if err != nil || st.Healthy || !strings.Contains(st.Reason, "damaged") {
				t.Errorf("STATUS after the damage: %+v, %v; want unhealthy, saying damaged", st, err)
			}
			ready := httptest.NewRecorder()
			OpsHandler(metrics.New(), []ReadyCheck{{Name: "lease-store", Err: f.svc.StoreHealth}}, nil).
				ServeHTTP(ready, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if ready.Code != http.StatusServiceUnavailable || !strings.Contains(ready.Body.String(), "lease-store") {
				t.Errorf("/readyz after the damage: %d %q, want 503 naming the lease store", ready.Code, ready.Body.String())
			}

			closed := make(chan error, 1)
			go func() { closed <- alloc.Close() }()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatal("closing the damaged store did not return: raild would ignore SIGTERM")
			}
			if again, err := statedir.OpenLeaseStore(cfg, pools, nil); err == nil {
				defer again.Close()
				for _, l := range again.Leases() {
					if want, ok := held[l.Sandbox]; ok && l.Address.String() != want {
						t.Errorf("restart: %s holds %s, was %s", l.Sandbox, l.Address, want)
					}
					delete(held, l.Sandbox)
				}
				t.Fatalf("restart opened the damaged store without the leases %v", held)
			} else if !strings.Contains(err.Error(), "raild recover") {
				t.Fatalf("restart: %v, want the store refused, naming raild recover", err)
			}

			var fromPods []ipam.Lease // what `raild recover` finds in the pods
			for sb, addr := range held {
				fromPods = append(fromPods, ipam.Lease{Sandbox: sb, IfName: "net1", CNIIfName: "net1", Network: "n", Pool: "p",
					Address: mustPrefix(t, addr), Created: time.Now()})
			}
			if _, err := ipam.Rebuild(store, pools, fromPods, time.Now()); err != nil {
				t.Fatalf("recovery: %v", err)
			}
			rebuilt, err := statedir.OpenLeaseStore(cfg, pools, nil)
			if err != nil {
				t.Fatalf("open after the recovery: %v", err)
			}
			defer rebuilt.Close()
			taken := map[string]bool{}
			for _, addr := range held {
				taken[addr] = true
			}
			for i := range 20 {
				l, err := rebuilt.Allocate(ipam.Request{Sandbox: fmt.Sprint("new", i), IfName: "net1", CNIIfName: "net1", Network: "n", Pool: "p"})
				if err != nil || taken[l.Address.String()] {
					t.Fatalf("allocation after the recovery: %v, %v; an address a pod holds was handed out again", l.Address, err)
				}
			}
		})
	}
}

func mustPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
