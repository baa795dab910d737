package statedir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockStateDir: a second raild on the same state dir is refused with
// the holder's pid; the dir is free again once the holder lets go.
func TestLockStateDir(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) // runs before the lock is taken
		wantErr string
	}{
		{name: "fresh dir is created", prepare: func(*testing.T, string) {}},
		{name: "lock file left by a dead raild", prepare: func(t *testing.T, dir string) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, lockFileName), []byte("999999\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "state dir is a file", prepare: func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "not a directory: raild's state dir must be a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			tt.prepare(t, dir)
			first, err := LockDir(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("lockStateDir = %v, want an error mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(filepath.Join(dir, lockFileName)); err != nil || string(data) != fmt.Sprintln(os.Getpid()) {
				t.Errorf("lock file = %q, %v; want this pid", data, err)
			}
			second, err := LockDir(dir)
			want := fmt.Sprintf("state dir %s: in use by another raild (pid %d)", dir, os.Getpid())
			if err == nil || !strings.Contains(err.Error(), want) {
				if second != nil {
					second.Unlock()
				}
				first.Unlock()
				t.Fatalf("second lockStateDir = %v, want an error with %q", err, want)
			}
			if err := first.Unlock(); err != nil {
				t.Fatal(err)
			}
			third, err := LockDir(dir)
			if err != nil {
				t.Fatalf("lock after release: %v", err)
			}
			third.Unlock()
		})
	}
}
