package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// runInstallCNI copies the plugin binaries shipped in the image into the
// host's CNI bin dir. Each lands atomically (temp file, fsync, rename), so a
// runtime never executes a half-written plugin.
func runInstallCNI(args []string) error {
	fs := newFlags("install-cni")
	from := fs.String("from", "/opt/rail/bin", "directory holding rail and rail-ipam")
	to := fs.String("to", "/host/opt/cni/bin", "the host's CNI bin dir")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, name := range []string{"rail", "rail-ipam"} {
		if err := installFile(filepath.Join(*from, name), filepath.Join(*to, name)); err != nil {
			return err
		}
		fmt.Printf("installed %s\n", filepath.Join(*to, name))
	}
	return nil
}

func installFile(src, dst string) (retErr error) {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp file next to %s: %w", dst, err)
	}
	defer func() {
		if retErr != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, in); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("rename into %s: %w", dst, err)
	}
	return syncDir(filepath.Dir(dst))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
