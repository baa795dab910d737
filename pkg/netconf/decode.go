package netconf

import (
	"errors"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
)

// decodeStrict decodes a netconf (or a section of one) with exact keys:
// an unknown key, or one in another case, is CNI code 2 naming it and what
// is accepted; anything else that does not decode is code 6.
func decodeStrict(data []byte, into any, accepted string) error {
	err := api.DecodeStrict(data, into)
	if err == nil {
		return nil
	}
	var keyErr *api.KeyError
	if errors.As(err, &keyErr) {
		return unknownFieldError(api.Excerpt(keyErr.Error(), 200) + "; " + accepted)
	}
	return types.NewError(types.ErrDecodingFailure, "failed to decode netconf", api.Excerpt(err.Error(), 400))
}
