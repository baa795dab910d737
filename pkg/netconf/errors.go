// Package netconf holds the CNI configuration of rail and rail-ipam: types,
// strict loading and validation with errors that name the field and the fix.
package netconf

import (
	"fmt"

	"github.com/containernetworking/cni/pkg/types"
)

// fieldError builds a CNI "invalid config" error naming the field.
func fieldError(field, format string, args ...any) *types.Error {
	return types.NewError(types.ErrInvalidNetworkConfig,
		fmt.Sprintf("invalid netconf field %q", field), fmt.Sprintf(format, args...))
}

// unknownFieldError is CNI code 2: a field the plugin does not understand.
func unknownFieldError(detail string) *types.Error {
	return types.NewError(types.ErrUnsupportedField, "unsupported netconf field", detail)
}
