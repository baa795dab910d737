package cniconf

import (
	"errors"
	"testing"
	"time"
)

// The guard counts as reverts only files found without the entry soon
// after rail wrote it, within the window; only the marker is an uninstall.
func TestGuard(t *testing.T) {
	const file = "/etc/cni/net.d/10-calico.conflist"
	missing := Status{Target: file, File: file, Entry: EntryMissing}
	stale := Status{Target: file, File: file, Entry: EntryStale}
	type call struct {
		wrote  time.Duration // rail wrote the entry at this time (-1: did not)
		at     time.Duration // then allow was asked
		status Status
		want   error
	}
	tests := []struct {
		name  string
		calls []call
	}{
		{name: "first insertion is no revert", calls: []call{
			{-1, 0, missing, nil}, {-1, 0, missing, nil}, {-1, 0, missing, nil}, {-1, 0, missing, nil}}},
		{name: "third quick revert within the window is a fight", calls: []call{
			{0, time.Second, missing, nil}, {2 * time.Second, 3 * time.Second, missing, nil}, {4 * time.Second, 5 * time.Second, missing, ErrFight}}},
		{name: "another entry written back counts too", calls: []call{
			{0, time.Second, stale, nil}, {2 * time.Second, 3 * time.Second, stale, nil}, {4 * time.Second, 5 * time.Second, stale, ErrFight}}},
		{name: "rewrites long after rail's write are the primary's own (a restart, a config change)", calls: []call{
			{0, 10 * time.Second, missing, nil}, {11 * time.Second, 20 * time.Second, missing, nil},
			{21 * time.Second, 30 * time.Second, missing, nil}, {31 * time.Second, 40 * time.Second, missing, nil}}},
		{name: "quick reverts spread beyond the window (primary restarts now and then)", calls: []call{
			{0, time.Second, missing, nil}, {50 * time.Second, 51 * time.Second, missing, nil},
			{100 * time.Second, 101 * time.Second, missing, nil}, {150 * time.Second, 151 * time.Second, missing, nil}}},
		{name: "a revert that is not rail's file's", calls: []call{
			{0, time.Second, Status{Target: "/other", File: "/other", Entry: EntryMissing}, nil},
			{2 * time.Second, 3 * time.Second, Status{Target: "/other", File: "/other", Entry: EntryMissing}, nil},
			{4 * time.Second, 5 * time.Second, missing, nil}}},
		{name: "the uninstall marker, whatever the entry", calls: []call{
			{-1, 0, Status{Target: file, File: file, Entry: EntryCurrent, Uninstalled: true}, ErrUninstalled}}},
		{name: "entry and backup gone without the marker: no uninstall", calls: []call{
			{0, time.Hour, missing, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := start
			opt := WatchOptions{Now: func() time.Time { return now }}
			opt.defaults()
			g := newGuard(opt)
			for i, c := range tt.calls {
				if c.wrote >= 0 {
					now = start.Add(c.wrote)
					g.installed(Result{Status: Status{Target: file, File: file}, Changed: true})
				}
				now = start.Add(c.at)
				err := g.allow(c.status)
				if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
					t.Fatalf("call %d at %v: %v, want %v", i, c.at, err, c.want)
				}
			}
		})
	}
}
