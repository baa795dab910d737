package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/netnstest"
)

// TestLockDirTrust: raild writes its state dir as root, so a dir others
// may write to, or that another user owns, is refused with the fix, and
// nothing in it is opened through a link or as anything but a file.
func TestLockDirTrust(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir, outside string)
		want    []string // in the error; none: LockDir succeeds
	}{
		{name: "0755 dir of this user", prepare: func(t *testing.T, dir, _ string) { mkdir(t, dir, 0o755) }},
		{name: "world-writable dir", prepare: func(t *testing.T, dir, _ string) { mkdir(t, dir, 0o777) },
			want: []string{"mode -rwxrwxrwx lets group or others replace", "chmod 0700 ", "chown root "}},
		{name: "group-writable dir", prepare: func(t *testing.T, dir, _ string) { mkdir(t, dir, 0o770) },
			want: []string{"mode -rwxrwx--- lets group or others replace", "chmod 0700 "}},
		{name: "sticky /tmp-like dir", prepare: func(t *testing.T, dir, _ string) { mkdir(t, dir, 0o777|os.ModeSticky) },
			want: []string{"lets group or others replace"}},
		{name: "dir of another user", prepare: func(t *testing.T, dir, _ string) {
			netnstest.RequireRoot(t, "gives a directory away")
			mkdir(t, dir, 0o700)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"owned by uid 65534, not by this user or root", "chown root "}},
		{name: "lock file is a symlink", prepare: func(t *testing.T, dir, outside string) {
			mkdir(t, dir, 0o700)
			if err := os.Symlink(outside, filepath.Join(dir, lockFileName)); err != nil {
				t.Fatal(err)
			}
		}, want: []string{lockFileName + ": a symbolic link", "remove it"}},
		{name: "lock file is a dangling symlink", prepare: func(t *testing.T, dir, outside string) {
			mkdir(t, dir, 0o700)
			if err := os.Symlink(outside+".new", filepath.Join(dir, lockFileName)); err != nil {
				t.Fatal(err)
			}
		}, want: []string{lockFileName + ": a symbolic link"}},
		{name: "lock file is a FIFO", prepare: func(t *testing.T, dir, _ string) {
			mkdir(t, dir, 0o700)
			if err := mkfifo(filepath.Join(dir, lockFileName)); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"not a regular file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dir, outside := filepath.Join(base, "state"), filepath.Join(base, "precious")
			if err := os.WriteFile(outside, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			tt.prepare(t, dir, outside)
			lock, err := LockDir(dir)
			if data, rerr := os.ReadFile(outside); rerr != nil || string(data) != "precious" {
				t.Errorf("file outside the state dir = %q, %v; want it untouched", data, rerr)
			}
			if _, serr := os.Stat(outside + ".new"); serr == nil {
				t.Error("a file was created through the dangling link")
			}
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				lock.Unlock()
				return
			}
			if err == nil {
				lock.Unlock()
				t.Fatalf("LockDir accepted it; want an error with %q", tt.want)
			}
			for _, w := range append(tt.want, dir) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("LockDir = %v; want %q in it", err, w)
				}
			}
		})
	}
}

// mkdir makes dir with exactly mode (the umask does not narrow it).
func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}
