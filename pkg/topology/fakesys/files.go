package fakesys

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// files writes below one root and keeps the first error, so a layout can
// be written as a list of statements and checked once at the end.
type files struct {
	root string
	err  error
}

func (f *files) host(p string) string { return filepath.Join(f.root, p) }

// dir creates a machine directory and its parents.
func (f *files) dir(p string) {
	if f.err != nil {
		return
	}
	if err := os.MkdirAll(f.host(p), 0o755); err != nil {
		f.err = fmt.Errorf("create %s: %w", p, err)
	}
}

// file writes content plus a newline, as sysfs attributes read.
func (f *files) file(p, content string) {
	f.dir(filepath.Dir(p))
	if f.err != nil {
		return
	}
	if err := os.WriteFile(f.host(p), []byte(content+"\n"), 0o644); err != nil {
		f.err = fmt.Errorf("write %s: %w", p, err)
	}
}

// link makes p a relative symlink to the machine path target, the way
// sysfs links are relative ("../../devices/pci0000:15/...").
func (f *files) link(p, target string) {
	f.dir(filepath.Dir(p))
	if f.err != nil {
		return
	}
	rel, err := filepath.Rel(filepath.Dir(p), target)
	if err != nil {
		f.err = fmt.Errorf("link %s -> %s: %w", p, target, err)
		return
	}
	if upOnly(rel) {
		// The target is the link's own directory or above it: the kernel
		// (kernfs_get_target_path) climbs to the target's parent and names
		// it, as a netdev's `device` reads ../../../0000:01:00.0.
		rel = filepath.Join(rel, "..", filepath.Base(target))
	}
	if err := os.Symlink(rel, f.host(p)); err != nil {
		f.err = fmt.Errorf("link %s: %w", p, err)
	}
}

// upOnly says whether a relative path only climbs ("..", "../..", ".").
func upOnly(rel string) bool {
	for _, elem := range strings.Split(rel, "/") {
		if elem != ".." && elem != "." {
			return false
		}
	}
	return true
}
