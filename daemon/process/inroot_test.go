package process

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStatInRoot resolves paths inside a root as the kernel resolves them
// for a process chrooted there, by openat2 and by the walk alike.
func TestStatInRoot(t *testing.T) {
	const major, minor = 231, 192
	tests := []struct {
		name  string
		links map[string]string // path in the root → link target (HOST: a folder outside the root)
		nodes []string          // char devices major:minor in the root
		fifos []string
		path  string
		want  uint32 // file type; 0: an error
		err   error
	}{
		{name: "node", nodes: []string{"dev/uverbs0"}, path: "/dev/uverbs0", want: unix.S_IFCHR},
		{name: "relative path", nodes: []string{"dev/uverbs0"}, path: "dev/uverbs0", want: unix.S_IFCHR},
		{name: "absolute link out", links: map[string]string{"dev/uverbs0": "HOST/node"}, path: "/dev/uverbs0", err: unix.ENOENT},
		{name: "dot-dot link out", links: map[string]string{"dev/uverbs0": "../../../../../../../../..HOST/node"}, path: "/dev/uverbs0", err: unix.ENOENT},
		{name: "dot-dot in the path", path: "/../../../../..HOST/node", err: unix.ENOENT},
		{name: "link to /dev/null", links: map[string]string{"dev/uverbs0": "/dev/null"}, path: "/dev/uverbs0", err: unix.ENOENT},
		{name: "absolute link inside", nodes: []string{"real/uverbs0"}, links: map[string]string{"dev/uverbs0": "/real/uverbs0"}, path: "/dev/uverbs0", want: unix.S_IFCHR},
		{name: "relative link inside", nodes: []string{"real/uverbs0"}, links: map[string]string{"dev/uverbs0": "../real/uverbs0"}, path: "/dev/uverbs0", want: unix.S_IFCHR},
		{name: "dot-dot clamped at the root", nodes: []string{"real/uverbs0"}, links: map[string]string{"dev/uverbs0": "../../../../real/uverbs0"}, path: "/dev/uverbs0", want: unix.S_IFCHR},
		{name: "linked folder", nodes: []string{"real/uverbs0"}, links: map[string]string{"dev": "/real"}, path: "/dev/uverbs0", want: unix.S_IFCHR},
		{name: "link chain", nodes: []string{"real/uverbs0"}, links: map[string]string{"dev/uverbs0": "/dev/a", "dev/a": "b", "dev/b": "/real/uverbs0"}, path: "/dev/uverbs0", want: unix.S_IFCHR},
		{name: "loop", links: map[string]string{"dev/a": "b", "dev/b": "/dev/a"}, path: "/dev/a", err: unix.ELOOP},
		{name: "file as folder", nodes: []string{"dev/uverbs0"}, path: "/dev/uverbs0/x", err: unix.ENOTDIR},
		{name: "fifo is not opened", fifos: []string{"dev/uverbs0"}, path: "/dev/uverbs0", want: unix.S_IFIFO},
		{name: "the root", path: "/", want: unix.S_IFDIR},
		{name: "a folder", nodes: []string{"dev/uverbs0"}, path: "/dev/", want: unix.S_IFDIR},
	}
	for _, walk := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(map[bool]string{false: "openat2/", true: "walk/"}[walk]+tt.name, func(t *testing.T) {
				host := t.TempDir()
				if err := unix.Mknod(filepath.Join(host, "node"), unix.S_IFCHR|0o600, int(unix.Mkdev(major, minor))); err != nil {
					t.Skipf("mknod (needs root): %v", err)
				}
				root := filepath.Join(t.TempDir(), "root")
				must(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
				for _, n := range tt.nodes {
					must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, n)), 0o755))
					must(t, unix.Mknod(filepath.Join(root, n), unix.S_IFCHR|0o600, int(unix.Mkdev(major, minor))))
				}
				for _, n := range tt.fifos {
					must(t, unix.Mkfifo(filepath.Join(root, n), 0o600))
				}
				for at, target := range tt.links {
					if at == "dev" {
						must(t, os.RemoveAll(filepath.Join(root, "dev")))
					}
					must(t, os.Symlink(strings.ReplaceAll(target, "HOST", host), filepath.Join(root, at)))
				}
				fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY, 0)
				must(t, err)
				defer unix.Close(fd)
				st, err := statInRoot(fd, strings.ReplaceAll(tt.path, "HOST", host), !walk)
				if tt.err != nil {
					if !errors.Is(err, tt.err) {
						t.Fatalf("err %v; want %v", err, tt.err)
					}
					return
				}
				if err != nil || st.Mode&unix.S_IFMT != tt.want {
					t.Fatalf("mode %o, err %v; want type %o", st.Mode&unix.S_IFMT, err, tt.want)
				}
				if tt.want == unix.S_IFCHR && (unix.Major(st.Rdev) != major || unix.Minor(st.Rdev) != minor) {
					t.Fatalf("rdev %d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
				}
			})
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
