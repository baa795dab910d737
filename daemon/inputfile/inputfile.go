// Package inputfile reads the files raild's input names (its config file,
// cni.entryFile, the kubeconfig; Regular checks the files a kubeconfig
// names, which client-go opens itself): regular files only, opened without waiting and read up
// to a bound. A FIFO named there would otherwise hang raild at start,
// deaf to SIGTERM, waiting for a writer; a device node or a socket is no
// config either. Links are followed (a ConfigMap volume's files are
// links).
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Read reads a regular file of at most max bytes.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENXIO) { // a socket cannot be opened: say what it is
		if info, serr := os.Stat(path); serr == nil {
			err = notRegular(info.Mode())
		}
	}
	if err != nil {
		return nil, pathError("open", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, pathError("stat", path, err)
	}
	if err := notRegular(info.Mode()); err != nil {
		return nil, pathError("read", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, pathError("read", path, err)
	}
	if int64(len(data)) > max {
		return nil, pathError("read", path, fmt.Errorf("larger than %d bytes", max))
	}
	return data, nil
}

// Regular returns nil when path, links followed, is a regular file, and
// otherwise an error naming the path and what it is, without opening it:
// for files a library opens itself (the files a kubeconfig names).
func Regular(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := notRegular(info.Mode()); err != nil {
		return pathError("read", path, err)
	}
	return nil
}

func pathError(op, path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// notRegular is nil for a regular file and otherwise names what it is.
func notRegular(mode os.FileMode) error {
	switch {
	case mode.IsRegular():
		return nil
	case mode&os.ModeNamedPipe != 0:
		return errors.New("is a FIFO, not a regular file")
	case mode&os.ModeSocket != 0:
		return errors.New("is a socket, not a regular file")
	case mode&os.ModeDevice != 0:
		return errors.New("is a device node, not a regular file")
	case mode.IsDir():
		return errors.New("is a directory, not a regular file")
	}
	return fmt.Errorf("is not a regular file (%v)", mode.Type())
}
