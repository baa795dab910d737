package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// requestKinds makes an empty value of each request type the socket API
// decodes.
func requestKinds() []func() any {
	return []func() any{
		func() any { return &api.AllocateRequest{} },
		func() any { return &api.AttachmentRequest{} },
		func() any { return &api.GCRequest{} },
	}
}

// FuzzDecodeRequest feeds random bodies to the request decoder of each
// call. It must never panic; a refusal is a decode or unknown-field error
// with details; an accepted body decodes to a value that survives a round
// trip (encode, decode strictly again, same encoding).
func FuzzDecodeRequest(f *testing.F) {
	f.Add(uint8(0), []byte(`{"sandbox":"sb","ifName":"net1","network":"n","mode":"macvlan","chained":true,"annotations":{"rail.dev/gpus":"0"},"selector":{"nics":["mlx5_0"]}}`))
	f.Add(uint8(0), []byte(`{"sandbox":"sb","ifName":"net1","network":"n","MODE":"ipam"}`))
	f.Add(uint8(1), []byte(`{"Sandbox":"sb","ifName":"net1","network":"n"}`))
	f.Add(uint8(1), []byte(`{"sandbox":"a","sandbox":"b","ifName":"net1","network":"n"}`))
	f.Add(uint8(1), []byte(`{"sandbox":"sb","ifName":"net1","network":"n"} {}`))
	f.Add(uint8(2), []byte(`{"network":"n","valid":[{"sandbox":"sb","ifName":"net1"}]}`))
	f.Add(uint8(2), []byte(`{"network":"n","valid":[{"SANDBOX":"sb"}]}`))
	f.Add(uint8(0), []byte(`null`))
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		kinds := requestKinds()
		newValue := kinds[int(kind)%len(kinds)]
		first := newValue()
		if e := decodeRequest(body, first); e != nil {
			if (e.Code != api.CodeDecode && e.Code != api.CodeUnsupportedField) || e.Details == "" {
				t.Fatalf("refusal of %q = %+v: want a decode or unknown-field error with details", body, e)
			}
			return
		}
		encoded, err := json.Marshal(first)
		if err != nil {
			t.Fatalf("accepted %q, but the value does not encode: %v", body, err)
		}
		second := newValue()
		if e := decodeRequest(encoded, second); e != nil {
			t.Fatalf("accepted %q, but its own encoding %s is refused: %v", body, encoded, e)
		}
		again, _ := json.Marshal(second)
		if !bytes.Equal(encoded, again) {
			t.Fatalf("round trip of %q changed the value: %s then %s", body, encoded, again)
		}
	})
}
