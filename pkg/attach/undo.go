package attach

import (
	"errors"
	"fmt"
)

// undoList collects the inverse of every step taken so far; run replays
// them newest first. Attach functions use it with a named retErr:
//
//	defer func() {
//		if retErr != nil {
//			retErr = errors.Join(retErr, undo.run())
//		}
//	}()
type undoList struct {
	steps []undoStep
}

type undoStep struct {
	what string
	fn   func() error
}

// push records the inverse of a step that just succeeded.
func (u *undoList) push(what string, fn func() error) {
	u.steps = append(u.steps, undoStep{what: what, fn: fn})
}

// ErrUndoIncomplete marks an attach error whose undo failed in part: some
// of what the failed call did may still be in the pod or the host (the
// error says what), so an address on it must stay leased until a Detach
// has removed it.
var ErrUndoIncomplete = errors.New("undo incomplete")

// run executes every inverse, newest first, even when some fail, and
// returns the failures joined, marked with ErrUndoIncomplete. The list is
// empty afterwards.
func (u *undoList) run() error {
	var errs []error
	for i := len(u.steps) - 1; i >= 0; i-- {
		if err := u.steps[i].fn(); err != nil {
			errs = append(errs, fmt.Errorf("undo %s: %w", u.steps[i].what, err))
		}
	}
	u.steps = nil
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrUndoIncomplete, errors.Join(errs...))
}
