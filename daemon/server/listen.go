package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/railcni/rail/daemon/privatedir"
)

// dialTimeout bounds the probe of an existing socket: a live raild answers
// a connect at once, even when busy.
const dialTimeout = time.Second

// Socket is the API socket's listener. Close removes the socket file only
// while it is still the one this listener created.
type Socket struct {
	net.Listener
	path  string
	bound os.FileInfo
}

// Listen creates the API socket at path, private (mode 0600, root only) from
// the moment it can be reached:
//
//   - the socket's directory is created 0700 if missing, and refused if
//     group or others may write to it or it belongs to another user (they
//     could replace the socket);
//   - something at path that is not a socket is refused, never deleted;
//   - a socket at path that answers belongs to a live raild: refused, with
//     that process's pid; one that refuses connections is stale and removed;
//   - the socket is bound inside a fresh 0700 directory, set to 0600, and
//     only then hard-linked to path (which fails if path appeared meanwhile).
//
// The process umask is not touched: it is shared by every goroutine, so
// holding a narrow umask around bind would race with any file created
// elsewhere in the process at that moment.
func Listen(path string) (*Socket, error) {
	dir := filepath.Dir(path)
	if err := ensurePrivateDir(dir); err != nil {
		return nil, err
	}
	if err := clearStale(path); err != nil {
		return nil, err
	}
	return bindPrivate(path)
}

// ensurePrivateDir creates dir 0700 or checks that an existing one cannot
// be written by anyone but this user and root (privatedir.Ensure).
func ensurePrivateDir(dir string) error {
	return privatedir.Ensure(privatedir.Dir{Path: dir, Role: "socket dir", Guards: "the socket",
		Fix: "choose a --socket path in a directory only root can write to, e.g. /run/rail/raild.sock (its directory is created 0700)"})
}

// clearStale checks what is at path: nothing is fine, a socket nobody
// answers on is removed, anything else is refused.
func clearStale(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket %s: %w", path, err)
	}
	if info.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("socket %s: exists and is not a socket (%v): remove it yourself or choose another --socket", path, info.Mode().Type())
	}
	conn, err := net.DialTimeout("unix", path, dialTimeout)
	switch {
	case err == nil:
		pid := peerPID(conn)
		conn.Close()
		return fmt.Errorf("socket %s: another raild is serving on it (pid %s): stop it first, or give this one another --socket and --state-dir", path, pid)
	case errors.Is(err, syscall.ECONNREFUSED):
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove stale socket %s: %w", path, err)
		}
		return nil
	default:
		return fmt.Errorf("socket %s: exists but cannot be probed (%w): is another raild starting? remove it once nothing serves on it", path, err)
	}
}

// bindPrivate binds in a private directory next to path, sets 0600, then
// links the socket to path.
func bindPrivate(path string) (s *Socket, retErr error) {
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".r")
	if err != nil {
		return nil, fmt.Errorf("listen on %s: private bind dir: %w", path, err)
	}
	defer os.RemoveAll(tmp)
	bindPath := filepath.Join(tmp, "s")
	ln, err := net.Listen("unix", bindPath)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	defer func() {
		if retErr != nil {
			ln.Close()
		}
	}()
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // the bind path goes with tmp
	if err := os.Chmod(bindPath, 0o600); err != nil {
		return nil, fmt.Errorf("listen on %s: chmod: %w", path, err)
	}
	if err := os.Link(bindPath, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("socket %s: created by another process while this raild started: is another raild starting?", path)
		}
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	bound, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return &Socket{Listener: ln, path: path, bound: bound}, nil
}

// Path is where the socket is.
func (s *Socket) Path() string { return s.path }

// Close stops listening and removes the socket file if it is still this
// listener's (another process's socket at the same path is left alone).
func (s *Socket) Close() error {
	err := s.Listener.Close()
	if now, statErr := os.Lstat(s.path); statErr == nil && os.SameFile(now, s.bound) {
		if rmErr := os.Remove(s.path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove socket %s: %w", s.path, rmErr))
		}
	}
	return err
}
