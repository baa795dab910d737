package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// ErrGone is wrapped by the errors for a process that exited, or whose
// pid another process holds now.
var ErrGone = errors.New("process gone")

// Ref is one process: its pid and its start time (clock ticks after boot,
// field 22 of /proc/<pid>/stat), which no later holder of the pid shares.
// The zero Start never matches: an unpinned pid is never read.
type Ref struct {
	Pid   int
	Start uint64
}

// Pin reads the start time of the process that holds pid now, below
// proc (/proc on a node).
func Pin(proc string, pid int) (Ref, error) {
	if pid <= 0 {
		return Ref{}, fmt.Errorf("pid %d: %w", pid, ErrGone)
	}
	data, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return Ref{Pid: pid}, fmt.Errorf("pid %d: %w (%w)", pid, ErrGone, err)
	}
	start, err := startTime(data)
	if err != nil {
		return Ref{Pid: pid}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return Ref{Pid: pid, Start: start}, nil
}

// startTime is field 22 of a /proc/<pid>/stat line; the command (field 2)
// may hold spaces and parentheses, so fields are counted after its last
// ')'.
func startTime(stat []byte) (uint64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat %q: no command field", firstBytes(stat))
	}
	f := bytes.Fields(stat[i+1:])
	const field = 22 - 3 // the first field after ')' is field 3 (state)
	if len(f) <= field {
		return 0, fmt.Errorf("stat %q: %d fields after the command, want at least %d", firstBytes(stat), len(f), field+1)
	}
	v, err := strconv.ParseUint(string(f[field]), 10, 64)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("stat %q: start time %q: not a positive number", firstBytes(stat), f[field])
	}
	return v, nil
}

func firstBytes(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
