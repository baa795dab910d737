package verbs

import (
	"errors"
	"fmt"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
)

// WithRollback adds what went wrong while undoing a failed ADD to the
// ADD's error, keeping its CNI code: a rollback error is reported, never
// dropped. A nil rollback returns err as is.
func WithRollback(err, rollback error) error {
	if rollback == nil {
		return err
	}
	var cniErr *types.Error
	if !errors.As(err, &cniErr) {
		return errors.Join(err, fmt.Errorf("rollback: %w", rollback))
	}
	details := "rollback: " + rollback.Error()
	if cniErr.Details != "" {
		details = cniErr.Details + "; " + details
	}
	return types.NewError(cniErr.Code, cniErr.Msg, api.Excerpt(details, api.MaxDetails))
}
