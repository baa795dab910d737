package server

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/railcni/rail/pkg/api"
)

// decode reads a request body (bounded, and bounded in time by the
// server's ReadTimeout) and decodes it strictly; on failure it answers.
func decode(w http.ResponseWriter, r *http.Request, into any) bool {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(data) > maxBody {
		writeError(w, &api.Error{Code: api.CodeDecode, Msg: "request body unreadable, incomplete or over 1 MiB"})
		return false
	}
	if e := decodeRequest(data, into); e != nil {
		writeError(w, e)
		return false
	}
	return true
}

// decodeRequest decodes one JSON object into into with api.DecodeStrict:
// keys match exactly (case-sensitive), unknown or repeated keys and
// trailing data are refused. An unknown key is CodeUnsupportedField (the
// plugin may be newer than raild); everything else is CodeDecode.
func decodeRequest(data []byte, into any) *api.Error {
	err := api.DecodeStrict(data, into)
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	var keyErr *api.KeyError
	if errors.As(err, &keyErr) || strings.HasPrefix(msg, "unknown field") {
		return &api.Error{Code: api.CodeUnsupportedField, Msg: "invalid request",
			Details: msg + " (raild speaks API " + api.Version + "; is the plugin newer than raild?)"}
	}
	return &api.Error{Code: api.CodeDecode, Msg: "invalid request", Details: msg}
}
