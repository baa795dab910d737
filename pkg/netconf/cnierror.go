package netconf

import (
	"errors"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
)

// CNIError hands raild's coded errors on as CNI errors with the same code,
// prefixed with what was being done; other errors become code 999.
func CNIError(doing string, err error) error {
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		return types.NewError(apiErr.Code, doing+": "+apiErr.Msg, apiErr.Details)
	}
	var cniErr *types.Error
	if errors.As(err, &cniErr) {
		return err
	}
	return types.NewError(types.ErrInternal, doing, err.Error())
}
