package harness

import (
	"slices"
	"testing"
)

func TestSnapshotDiff(t *testing.T) {
	base := Snapshot{Links: []string{"link a", "link b"}, Routes: []string{"route x", "route x"}}
	tests := []struct {
		name  string
		other Snapshot
		want  []string
	}{
		{"equal", Snapshot{Links: []string{"link a", "link b"}, Routes: []string{"route x", "route x"}}, nil},
		{"link gone and new", Snapshot{Links: []string{"link a", "link c"}, Routes: []string{"route x", "route x"}},
			[]string{"- link b", "+ link c"}},
		{"duplicate route lost", Snapshot{Links: []string{"link a", "link b"}, Routes: []string{"route x"}},
			[]string{"- route x"}},
		{"rule added", Snapshot{Links: []string{"link a", "link b"}, Routes: []string{"route x", "route x"},
			Rules: []string{"rule y"}}, []string{"+ rule y"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := base.Diff(tc.other); !slices.Equal(got, tc.want) {
				t.Errorf("Diff = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFDKind(t *testing.T) {
	tests := []struct{ target, want string }{
		{"socket:[12345]", "socket"},
		{"pipe:[77]", "pipe"},
		{"anon_inode:[eventpoll]", "anon_inode:[eventpoll]"},
		{"/var/lib/rail/leases.db", "/var/lib/rail/leases.db"},
	}
	for _, tc := range tests {
		if got := fdKind(tc.target); got != tc.want {
			t.Errorf("fdKind(%q) = %q, want %q", tc.target, got, tc.want)
		}
	}
}
