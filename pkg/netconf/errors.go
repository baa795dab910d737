// Package netconf holds the CNI configuration of rail and rail-ipam: types,
// strict loading and validation with errors that name the field and the fix.
package netconf

import (
	"fmt"
	"reflect"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
)

// maxQuoted bounds each value an error quotes back.
const maxQuoted = 256

// fieldError builds a CNI "invalid config" error naming the field. String
// arguments (values the user wrote) are quoted in part when long.
func fieldError(field, format string, args ...any) *types.Error {
	for i, arg := range args {
		if v := reflect.ValueOf(arg); v.Kind() == reflect.String && v.Len() > maxQuoted {
			args[i] = api.Excerpt(v.String(), maxQuoted)
		}
	}
	return types.NewError(types.ErrInvalidNetworkConfig,
		fmt.Sprintf("invalid netconf field %q", field), fmt.Sprintf(format, args...))
}

// unknownFieldError is CNI code 2: a field the plugin does not understand.
func unknownFieldError(detail string) *types.Error {
	return types.NewError(types.ErrUnsupportedField, "unsupported netconf field", detail)
}
