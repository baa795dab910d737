package vm

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// node is one entry below a sysfs directory: a directory, a file with its
// text (or why it cannot be read), or a link with its target.
type node struct {
	Kind string // "dir", "file", "link"
	Text string // file content without the trailing newline, or link target
}

// sysTree maps paths relative to one sysfs directory to their entries.
type sysTree map[string]node

// summarizedDirs are kernel directories whose children are counters,
// table slots or power management, none of which Rail models: the
// directory itself is recorded, its children are not.
var summarizedDirs = []string{"power", "ports/*/counters", "ports/*/hw_counters", "ports/*/cm_*", "hw_counters"}

// tableDirs hold one entry per table slot (1024 GIDs, 128 P_Keys on an
// rxe); only slot 0 is recorded.
var tableDirs = []string{"ports/*/gids", "ports/*/pkeys", "ports/*/gid_attrs/ndevs", "ports/*/gid_attrs/types"}

// readSysTree reads the directory a sysfs class entry points to, without
// following any link below it.
func readSysTree(t *testing.T, classEntry string) sysTree {
	t.Helper()
	dir, err := filepath.EvalSymlinks(classEntry)
	if err != nil {
		t.Fatalf("resolve %s: %v", classEntry, err)
	}
	tree := sysTree{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if skip := skipped(rel); skip {
			return pruneDir(d)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			tree[rel] = node{Kind: "link", Text: target}
		case d.IsDir():
			tree[rel] = node{Kind: "dir"}
			if summarized(rel) {
				return fs.SkipDir
			}
		default:
			tree[rel] = node{Kind: "file", Text: readAttr(p)}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return tree
}

// readAttr reads a sysfs attribute; one the kernel refuses to show (an
// unused GID slot's ndev, a write-only attribute) reads as its error.
func readAttr(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "<unreadable: " + strings.TrimPrefix(err.Error(), "read "+p+": ") + ">"
	}
	return strings.TrimSuffix(string(b), "\n")
}

func summarized(rel string) bool { return matchesAny(rel, summarizedDirs) }

// skipped reports table slots other than 0.
func skipped(rel string) bool {
	return matchesAny(path.Dir(rel), tableDirs) && path.Base(rel) != "0"
}

func pruneDir(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

func matchesAny(rel string, patterns []string) bool {
	for _, pattern := range patterns {
		if ok, _ := path.Match(pattern, rel); ok {
			return true
		}
	}
	return false
}
