package api_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// FuzzCNIArgs: any bytes Multus could forward as cni-args either fail to
// decode with an error or decode to args that survive the trip to raild
// (encode, decode) unchanged, and encode the same way again. The plugin
// decodes strictly (api.DecodeStrict, as pkg/netconf does); what it accepts,
// plain encoding/json reads the same way.
//
//	go test -run '^$' -fuzz '^FuzzCNIArgs$' -fuzztime 60s ./pkg/api
func FuzzCNIArgs(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"pool":"prefill","gpus":"0,1","nics":"mlx5_0","rail":2}`,
		`{"gpus":[0,"GPU-5f3c",1.5],"nics":["mlx5_0"," mlx5_1 "],"rail":"3"}`,
		`{"gpus":" , ,","nics":[],"rail":null}`,
		`{"gpus":null,"nics":[""],"rail":" 7 "}`,
		`{"POOL":"x"}`, `{"pool":"a","pool":"b"}`, `{"pool":"a"} {}`,
		`{"rail":"x"}`, `{"rail":1e3}`, `{"gpus":{}}`, `{"gpus":[[1]]}`, `{"gpus":[1e999,-0]}`,
		`{"pool":"\u00e9\ud800"}`, `[]`, `null`, `"x"`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var first api.CNIArgs
		if err := api.DecodeStrict(data, &first); err != nil {
			if err.Error() == "" {
				t.Fatalf("decode error without a message for %q", data)
			}
			return
		}
		var plain api.CNIArgs
		if err := json.Unmarshal(data, &plain); err != nil || !sameArgs(first, plain) {
			t.Fatalf("strict decoding gave %+v, encoding/json %+v (%v) for %q", first, plain, err, data)
		}
		wire, err := json.Marshal(first)
		if err != nil {
			t.Fatalf("encode %+v (from %q): %v", first, data, err)
		}
		var second api.CNIArgs
		if err := api.DecodeStrict(wire, &second); err != nil {
			t.Fatalf("decode what was encoded, %s (from %q): %v", wire, data, err)
		}
		if !sameArgs(first, second) {
			t.Fatalf("round trip changed the args: %+v -> %s -> %+v (from %q)", first, wire, second, data)
		}
		again, err := json.Marshal(second)
		if err != nil || !bytes.Equal(wire, again) {
			t.Fatalf("second encoding %s (%v) differs from the first %s (from %q)", again, err, wire, data)
		}
	})
}

// sameArgs compares decoded args; an empty list and no list mean the same.
func sameArgs(a, b api.CNIArgs) bool {
	if a.Pool != b.Pool || !slices.Equal(a.GPUs, b.GPUs) || !slices.Equal(a.NICs, b.NICs) {
		return false
	}
	if a.Rail == nil || b.Rail == nil {
		return a.Rail == b.Rail
	}
	return *a.Rail == *b.Rail
}
