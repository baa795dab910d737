package cniconf

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// padded is a valid conflist of exactly size bytes (white space at the end).
func padded(t *testing.T, f fixture, size int) []byte {
	t.Helper()
	data := f.bytes(t)
	if len(data) > size {
		t.Fatalf("%s is larger than %d", f.file, size)
	}
	return append(data, bytes.Repeat([]byte(" "), size-len(data))...)
}

// A config larger than 1 MiB is refused with a reason that names the limit,
// and is not read whole: a 64 MiB file costs no 64 MiB of memory.
func TestInstallRefusesLargeFiles(t *testing.T) {
	f := listFixtures[0]
	tests := []struct {
		name    string
		write   func(t *testing.T, path string)
		refused bool
	}{
		{"exactly 1 MiB", func(t *testing.T, path string) {
			if err := os.WriteFile(path, padded(t, f, 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"one byte more", func(t *testing.T, path string) {
			if err := os.WriteFile(path, padded(t, f, 1<<20+1), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"64 MiB", func(t *testing.T, path string) {
			if err := os.WriteFile(path, padded(t, f, 64<<20), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := confDir(t)
			path := filepath.Join(dir, f.file)
			tt.write(t, path)
			before := readFile(t, path)
			in := anyVersionInstaller(t, dir)
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			res, err := in.Install(nil)
			runtime.ReadMemStats(&m1)
			if !tt.refused {
				if err != nil || !res.Changed {
					t.Fatalf("Install = %+v, %v; want the entry inserted", res, err)
				}
				return
			}
			if err == nil || res.Changed || !strings.Contains(err.Error(), "1 MiB") || !strings.Contains(err.Error(), f.file) {
				t.Fatalf("Install = %+v, %v; want a refusal naming the file and the 1 MiB limit", res, err)
			}
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 8<<20 {
				t.Errorf("Install allocated %d MiB for a refused file", alloc>>20)
			}
			if !bytes.Equal(readFile(t, path), before) || len(dirNames(t, dir)) != 1 {
				t.Fatalf("a refused file was changed, or something left beside it: %v", dirNames(t, dir))
			}
			if changed, err := in.Uninstall(); err != nil || len(changed) != 0 {
				t.Fatalf("Uninstall = %v, %v; want the file left alone", changed, err)
			}
		})
	}
}

// The runtime's file is a symbolic link (into the primary's own dir): rail
// refuses to edit it, since a file renamed over the link would cut the
// primary's later edits off from the runtime; uninstall leaves it alone too.
func TestInstallRefusesSymlink(t *testing.T) {
	for _, f := range []fixture{listFixtures[0], multusThick} {
		t.Run(f.name, func(t *testing.T) {
			dir, elsewhere := confDir(t), confDir(t)
			target := f.place(t, elsewhere)
			link := filepath.Join(dir, f.file)
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			in := anyVersionInstaller(t, dir)
			res, err := in.Install(nil)
			if err == nil || res.Changed || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), target) {
				t.Fatalf("Install = %+v, %v; want a refusal naming the link's target", res, err)
			}
			if _, err := in.Uninstall(); err != nil {
				t.Fatal(err)
			}
			if got, err := os.Readlink(link); err != nil || got != target {
				t.Fatalf("%s is no longer the link to %s: %q, %v", link, target, got, err)
			}
			if !bytes.Equal(readFile(t, target), f.bytes(t)) {
				t.Fatal("the link's target was changed")
			}
			if a, b := dirNames(t, dir), dirNames(t, elsewhere); !slices.Equal(a, []string{uninstallMarker, f.file}) || !slices.Equal(b, []string{f.file}) {
				t.Fatalf("left behind: %v, %v", a, b)
			}
		})
	}
}

// A FIFO named like a config neither blocks the installer nor is edited.
func TestInstallRefusesFIFO(t *testing.T) {
	dir := confDir(t)
	path := filepath.Join(dir, "10-x.conflist")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := anyVersionInstaller(t, dir).Install(nil)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Install: %v; want a refusal", err)
	}
	if _, err := anyVersionInstaller(t, dir).Uninstall(); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(path); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v", err)
	}
}

// Leftovers of a raild or install-cni killed mid-write (temp files) go at
// the watcher's start and at uninstall; files of others stay.
func TestStaleTempFilesRemoved(t *testing.T) {
	f := listFixtures[0]
	temps := []string{"." + f.file + ".rail-tmp-2841", "." + f.file + backupSuffix + ".rail-tmp-77", ".00-multus.conflist.rail-tmp-1"}
	others := []string{"calico-kubeconfig", ".hidden", "x.rail-tmp-3"}
	lay := func(t *testing.T) (dir string) {
		dir = confDir(t)
		f.place(t, dir)
		for _, name := range append(slices.Clone(temps), others...) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	check := func(t *testing.T, dir string, want ...string) {
		t.Helper()
		want = append(want, others...)
		slices.Sort(want)
		if names := dirNames(t, dir); !slices.Equal(names, want) {
			t.Fatalf("conf dir holds %v, want %v", names, want)
		}
	}
	t.Run("watcher start", func(t *testing.T) {
		dir := lay(t)
		w := startWatcher(t, dir, testOptions)
		waitFor(t, w, "in place", inPlace)
		check(t, dir, f.file, f.file+backupSuffix)
	})
	t.Run("uninstall", func(t *testing.T) {
		dir := lay(t)
		if _, err := anyVersionInstaller(t, dir).Uninstall(); err != nil {
			t.Fatal(err)
		}
		check(t, dir, uninstallMarker, f.file)
	})
}

// The primary renames its file: the backup of the old name goes, so at
// most the backup of the current primary's file is left.
func TestInstallKeepsOnlyTheCurrentBackup(t *testing.T) {
	f := listFixtures[0]
	renames := []struct {
		name   string
		rename func(t *testing.T, old, new string)
	}{
		{"moved with rail's entry in it", func(t *testing.T, old, new string) {
			if err := os.Rename(old, new); err != nil {
				t.Fatal(err)
			}
		}},
		{"written under a new name, the old one removed", func(t *testing.T, old, new string) {
			if err := os.WriteFile(new, f.bytes(t), f.perm); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(old); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, rn := range renames {
		t.Run(rn.name, func(t *testing.T) {
			dir := confDir(t)
			path := f.place(t, dir)
			in := anyVersionInstaller(t, dir)
			for i := range 3 {
				next := filepath.Join(dir, fmtName(i))
				rn.rename(t, path, next)
				path = next
				if _, err := in.Install(nil); err != nil {
					t.Fatal(err)
				}
			}
			var backups []string
			for _, name := range dirNames(t, dir) {
				if strings.HasSuffix(name, backupSuffix) {
					backups = append(backups, name)
					if _, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(name, backupSuffix))); err != nil {
						t.Errorf("backup %s of a file that is gone", name)
					}
				}
			}
			if len(backups) > 1 {
				t.Fatalf("backups %v: want at most the current one", backups)
			}
			checkKept(t, f.bytes(t), readFile(t, path))
		})
	}
}

func fmtName(i int) string { return "1" + string(rune('1'+i)) + "-calico.conflist" }
