package store

import (
	"errors"
	"fmt"
)

// ErrDamaged is matched (errors.Is) by every DamagedError.
var ErrDamaged = errors.New("lease store damaged")

// DamagedError says the lease store cannot be trusted: its file is damaged,
// truncated, missing or older than its side record. Open refuses it rather
// than start without leases it lost; the way out is to rebuild the leases
// from the pods (Rebuild). Error() is one line.
type DamagedError struct {
	Path    string // the file at fault: leases.db or its side record
	Problem string // what is wrong, e.g. "rolled back: ..."
	Hint    string // what to do about it (Options.DamagedHint), if anything

	fault bool // bbolt panicked or faulted: its locks may still be held
}

func (e *DamagedError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("lease store %s: %s; %s", e.Path, e.Problem, e.Hint)
	}
	return fmt.Sprintf("lease store %s: %s", e.Path, e.Problem)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// Damaged makes a *DamagedError for the file at path.
func Damaged(path, format string, args ...any) error {
	return &DamagedError{Path: path, Problem: fmt.Sprintf(format, args...)}
}
