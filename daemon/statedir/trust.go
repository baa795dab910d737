package statedir

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/railcni/rail/daemon/privatedir"
)

// Ensure creates the state dir 0700 when it is missing, or checks that an
// existing one is raild's own: root (or raild's user) may write there,
// nobody else. raild writes there as root; whoever else could write there
// could plant a link and make root overwrite any file.
func Ensure(dir string) error {
	return privatedir.Ensure(privatedir.Dir{Path: dir, Role: "state dir", Guards: "raild's lease store and lock",
		Fix: fmt.Sprintf("raild's state dir must be a directory only root can write to: chown root %[1]s && chmod 0700 %[1]s, or give raild another --state-dir (a missing one is created 0700)", dir)})
}

// openFile opens a file in the state dir, never through a symbolic link
// (O_NOFOLLOW), and refuses anything but a regular file: a link or a FIFO
// planted there must not make raild write or block elsewhere. New files
// are created 0600.
func openFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: a symbolic link: raild opens nothing in its state dir through a link; remove it", path)
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (%v): remove it", path, info.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
