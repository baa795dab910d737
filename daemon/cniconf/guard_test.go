package cniconf

import (
	"errors"
	"testing"
	"time"
)

// The guard counts reverts of files where the entry was seen, within the
// window only; an entry and backup both gone is an uninstall.
func TestGuard(t *testing.T) {
	const file = "/etc/cni/net.d/10-calico.conflist"
	missing := Status{Target: file, File: file, Entry: EntryMissing, Recorded: true}
	stale := Status{Target: file, File: file, Entry: EntryStale, Recorded: true}
	tests := []struct {
		name    string
		seen    bool
		status  Status
		at      []time.Duration // times of successive allow calls
		wantErr []error         // per call
	}{
		{name: "first insertion is no revert", status: missing, at: []time.Duration{0, 0, 0, 0},
			wantErr: []error{nil, nil, nil, nil}},
		{name: "third revert within the window is a fight", seen: true, status: missing,
			at: []time.Duration{0, time.Second, 2 * time.Second}, wantErr: []error{nil, nil, ErrFight}},
		{name: "another entry written back counts too", seen: true, status: stale,
			at: []time.Duration{0, time.Second, 2 * time.Second}, wantErr: []error{nil, nil, ErrFight}},
		{name: "reverts spread beyond the window (primary restarts now and then)", seen: true, status: missing,
			at: []time.Duration{0, 50 * time.Second, 100 * time.Second, 150 * time.Second}, wantErr: []error{nil, nil, nil, nil}},
		{name: "entry and backup gone: uninstalled", seen: true, status: Status{Target: file, File: file, Entry: EntryMissing},
			at: []time.Duration{0}, wantErr: []error{ErrUninstalled}},
		{name: "backup gone before rail ever saw the file: install", status: Status{Target: file, File: file, Entry: EntryMissing},
			at: []time.Duration{0}, wantErr: []error{nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := start
			g := newGuard(3, time.Minute, func() time.Time { return now })
			if tt.seen {
				g.inPlace(Status{Target: file, File: file, Entry: EntryCurrent})
			}
			for i, at := range tt.at {
				now = start.Add(at)
				err := g.allow(tt.status)
				if tt.wantErr[i] == nil && err != nil || tt.wantErr[i] != nil && !errors.Is(err, tt.wantErr[i]) {
					t.Fatalf("call %d at %v: %v, want %v", i, at, err, tt.wantErr[i])
				}
			}
		})
	}
}
