package installcni

import (
	"os"
	"path/filepath"
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
