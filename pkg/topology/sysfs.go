package topology

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// fsys reads sysfs and procfs below one root directory. Paths given to its
// methods are absolute machine paths ("/sys/class/..."); it joins them to
// the root and strips the root again from resolved links.
type fsys struct {
	root   string // as given, for messages
	prefix string // resolved root without trailing slash; "" for "/"
}

func newFsys(root string) (*fsys, error) {
	if root == "" {
		root = "/"
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", root, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w (set --root to a directory holding sys/ and proc/)", root, err)
	}
	info, err := os.Stat(filepath.Join(resolved, "sys"))
	if err != nil || !info.IsDir() {
		return nil, fmt.Errorf("root %q: no sys directory below it (set --root to a directory holding sys/ and proc/)", root)
	}
	prefix := strings.TrimSuffix(resolved, "/")
	return &fsys{root: root, prefix: prefix}, nil
}

// host turns a machine path into a path on this host.
func (f *fsys) host(p string) string { return f.prefix + p }

// read returns a file's content without surrounding white space.
func (f *fsys) read(p string) (string, error) {
	b, err := readFile(f.host(p))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// readInt reads a decimal integer file such as numa_node.
func (f *fsys) readInt(p string) (int, error) {
	s, err := f.read(p)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", p, s)
	}
	return n, nil
}

// names lists a directory's entries (sorted by name).
func (f *fsys) names(p string) ([]string, error) {
	entries, err := os.ReadDir(f.host(p))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name()
	}
	return out, nil
}

// exists reports whether p exists (following links).
func (f *fsys) exists(p string) bool {
	_, err := os.Stat(f.host(p))
	return err == nil
}

// isLink reports whether p itself is a symbolic link (dangling or not).
func (f *fsys) isLink(p string) bool {
	info, err := os.Lstat(f.host(p))
	return err == nil && info.Mode()&os.ModeSymlink != 0
}

// errOutsideRoot is returned for links that lead out of the root.
var errOutsideRoot = errors.New("link leads outside the root")

// real resolves every link in p and returns the machine path it names.
func (f *fsys) real(p string) (string, error) {
	resolved, err := filepath.EvalSymlinks(f.host(p))
	if err != nil {
		return "", err
	}
	if f.prefix == "" {
		return resolved, nil
	}
	if !strings.HasPrefix(resolved, f.prefix+"/") {
		return "", fmt.Errorf("%s: %w", p, errOutsideRoot)
	}
	return resolved[len(f.prefix):], nil
}

// linkName resolves p and returns the last element of its target, e.g.
// the PCI address a physfn link points to.
func (f *fsys) linkName(p string) (string, error) {
	r, err := f.real(p)
	if err != nil {
		return "", err
	}
	return filepath.Base(r), nil
}

// why shortens a file error for a Problem: "missing", "dangling link", ...
func why(p string, err error) string {
	var pathErr *os.PathError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return p + " missing"
	case errors.As(err, &pathErr):
		return p + ": " + pathErr.Err.Error()
	default:
		return err.Error()
	}
}
