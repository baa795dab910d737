package raild

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// TestLedgerJudge proves the checker used by the concurrency test catches
// each way raild could be wrong, and accepts calls still in flight.
func TestLedgerJudge(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	from, to := at(10), at(20) // the snapshot was taken in between
	live := func(addr string) *record { return &record{addr: addr, asked: at(0), added: at(1)} }
	lease := func(sandbox, addr string) api.Lease { return api.Lease{Sandbox: sandbox, Address: addr} }
	tests := []struct {
		name    string
		recs    map[string]*record
		leases  []api.Lease
		wantErr string // "" for no error
	}{
		{name: "consistent", recs: map[string]*record{"a": live("10.9.0.1/16"), "b": live("10.9.0.2/16")},
			leases: []api.Lease{lease("a", "10.9.0.1/16"), lease("b", "10.9.0.2/16")}},
		{name: "ADD in flight, not yet listed", recs: map[string]*record{"a": {asked: at(5)}}},
		{name: "ADD in flight, already listed", recs: map[string]*record{"a": {asked: at(5)}},
			leases: []api.Lease{lease("a", "10.9.0.1/16")}},
		{name: "DEL in flight, still listed", recs: map[string]*record{"a": {addr: "10.9.0.1/16", asked: at(0), added: at(1), delAsked: at(15)}},
			leases: []api.Lease{lease("a", "10.9.0.1/16")}},
		{name: "DEL in flight, already gone", recs: map[string]*record{"a": {addr: "10.9.0.1/16", asked: at(0), added: at(1), delAsked: at(15)}}},
		{name: "duplicate address", recs: map[string]*record{"a": live("10.9.0.1/16"), "b": {asked: at(5)}},
			leases: []api.Lease{lease("a", "10.9.0.1/16"), lease("b", "10.9.0.1/16")}, wantErr: "leased to both"},
		{name: "other address than answered", recs: map[string]*record{"a": live("10.9.0.1/16")},
			leases: []api.Lease{lease("a", "10.9.0.7/16")}, wantErr: "its ADD answered 10.9.0.1/16"},
		{name: "lost lease", recs: map[string]*record{"a": live("10.9.0.1/16")}, wantErr: "lost lease"},
		{name: "listed after DEL answered", recs: map[string]*record{"a": {addr: "10.9.0.1/16", asked: at(0), added: at(1), delAsked: at(2), deleted: at(3)}},
			leases: []api.Lease{lease("a", "10.9.0.1/16")}, wantErr: "after its DEL"},
		{name: "lease nobody asked for", leases: []api.Lease{lease("ghost", "10.9.0.1/16")}, wantErr: "no client asked"},
		{name: "asked after the snapshot", recs: map[string]*record{"a": {asked: at(25)}},
			leases: []api.Lease{lease("a", "10.9.0.1/16")}, wantErr: "no client asked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			book := newLedger()
			for sandbox, rec := range tt.recs {
				book.recs[sandbox] = rec
			}
			err := errors.Join(book.judge(tt.leases, from, to)...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("judge found %v in a consistent snapshot", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("judge = %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

// TestCrashBookSettle proves the checker used after each SIGKILL catches
// each way raild could be wrong, and settles cut-off calls either way.
func TestCrashBookSettle(t *testing.T) {
	lease := func(sandbox, addr string) api.Lease { return api.Lease{Sandbox: sandbox, Address: addr} }
	tests := []struct {
		name     string
		held     map[string]string
		maybe    []string
		gone     []string
		leases   []api.Lease
		wantErr  string
		wantHeld int // held leases after settling
	}{
		{name: "consistent", held: map[string]string{"a": "10.9.0.1/16"}, leases: []api.Lease{lease("a", "10.9.0.1/16")}, wantHeld: 1},
		{name: "cut ADD reached the disk", maybe: []string{"a"}, leases: []api.Lease{lease("a", "10.9.0.1/16")}, wantHeld: 1},
		{name: "cut ADD did not", maybe: []string{"a"}},
		{name: "lost", held: map[string]string{"a": "10.9.0.1/16"}, wantErr: "lost lease", wantHeld: 1},
		{name: "moved", held: map[string]string{"a": "10.9.0.1/16"}, leases: []api.Lease{lease("a", "10.9.0.2/16")},
			wantErr: "holds 10.9.0.2/16", wantHeld: 1},
		{name: "twice", held: map[string]string{"a": "10.9.0.1/16"}, maybe: []string{"b"},
			leases: []api.Lease{lease("a", "10.9.0.1/16"), lease("b", "10.9.0.1/16")}, wantErr: "leased to both", wantHeld: 2},
		{name: "released came back", gone: []string{"a"}, leases: []api.Lease{lease("a", "10.9.0.1/16")}, wantErr: "was released"},
		{name: "unknown", leases: []api.Lease{lease("x", "10.9.0.1/16")}, wantErr: "no client asked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			book := newCrashBook()
			for sandbox, addr := range tt.held {
				book.held[sandbox] = addr
			}
			for _, sandbox := range tt.maybe {
				book.maybe[sandbox] = true
			}
			for _, sandbox := range tt.gone {
				book.gone[sandbox] = true
			}
			err := errors.Join(book.settle(tt.leases)...)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("settle found %v in a consistent state", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("settle = %v, want an error mentioning %q", err, tt.wantErr)
			}
			if len(book.held) != tt.wantHeld || len(book.maybe) != 0 {
				t.Fatalf("after settling: held %v, maybe %v; want %d held, none unsettled", book.held, book.maybe, tt.wantHeld)
			}
		})
	}
}
