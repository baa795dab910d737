package nsfs

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCheckAndOpen: a namespace file opens; a FIFO (whose open would wait
// for a writer), a socket, a regular file, a folder and /dev/null are
// refused as not a netns, without waiting; a missing path is ErrNotExist.
func TestCheckAndOpen(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ns.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "ns.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	file := filepath.Join(dir, "ns.file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want error // nil: a netns
	}{
		{"/proc/self/ns/net", nil},
		{fifo, ErrNotNetns},
		{filepath.Join(dir, "ns.sock"), ErrNotNetns},
		{file, ErrNotNetns},
		{dir, ErrNotNetns},
		{"/dev/null", ErrNotNetns},
		{filepath.Join(dir, "gone"), os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			if err := Check(tt.path); !errors.Is(err, tt.want) && (tt.want != nil || err != nil) {
				t.Fatalf("Check = %v; want %v", err, tt.want)
			}
			h, err := Open(tt.path)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				h.Close()
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open = %v; want %v", err, tt.want)
			}
		})
	}
}
