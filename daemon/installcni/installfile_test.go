package installcni

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestInstallFileIsAtomicAndExecutable(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	src := filepath.Join(from, "rail")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(to, "rail")
	if err := os.WriteFile(dst, []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := installFile(src, dst); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(dst)
	info, _ := os.Stat(dst)
	if err != nil || string(data) != "#!/bin/sh\necho new\n" || info.Mode().Perm() != 0o755 {
		t.Fatalf("installed %q mode %v, %v", data, info.Mode(), err)
	}
	entries, _ := os.ReadDir(to)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
	if err := installFile(filepath.Join(from, "missing"), dst); err == nil {
		t.Fatal("missing source: want an error")
	}
}

// Temp files of an install-cni killed mid-copy go at the next install.
func TestInstallCNIRemovesStaleTempFiles(t *testing.T) {
	from, to, confDir, _ := installCNIDirs(t)
	stale := []string{".rail.rail-tmp-12345", ".rail-ipam.rail-tmp-9"}
	for _, name := range stale {
		if err := os.WriteFile(filepath.Join(to, name), []byte("half a binary"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(to, ".bridge.tmp")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := installCNI([]string{"--from", from, "--to", to, "--conf-dir", confDir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(to)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{".bridge.tmp", "rail", "rail-ipam"}; !slices.Equal(names, want) {
		t.Fatalf("bin dir holds %v, want %v", names, want)
	}
}
