// Package privatedir checks the directories raild keeps its files in (the
// API socket's, the state dir): whoever may write to one could replace
// raild's files there, or plant a link that makes root write elsewhere.
package privatedir

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Dir names a directory for the messages: Role is what it is ("socket
// dir"), Guards what a writer could replace ("the socket"), Fix what to do
// when it is not private.
type Dir struct {
	Path   string
	Role   string
	Guards string
	Fix    string
}

// Ensure creates d.Path 0700 when it is missing, or checks an existing one:
// it must be a directory that neither group nor others may write to, owned
// by this user or root. An existing directory is never chmod'ed: it may be
// shared (/run, /tmp) and others may rely on it.
func Ensure(d Dir) error {
	if _, err := os.Lstat(d.Path); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(d.Path, 0o700); err != nil {
			return fmt.Errorf("create %s %s: %w", d.Role, d.Path, err)
		}
		if err := os.Chmod(d.Path, 0o700); err != nil { // the umask may have narrowed it oddly
			return fmt.Errorf("create %s %s: %w", d.Role, d.Path, err)
		}
	}
	info, err := os.Stat(d.Path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", d.Role, d.Path, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("%s %s: not a directory: %s", d.Role, d.Path, d.Fix)
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s %s: mode %v lets group or others replace %s: %s", d.Role, d.Path, info.Mode().Perm(), d.Guards, d.Fix)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s %s: owned by uid %d, not by this user or root: its owner could replace %s: %s", d.Role, d.Path, st.Uid, d.Guards, d.Fix)
	}
	return nil
}
