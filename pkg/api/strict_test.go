package api

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type strictInner struct {
	Pool string `json:"pool"`
}

type strictEmbedded struct {
	Name string `json:"name"`
}

type strictTarget struct {
	strictEmbedded
	Mode   string                 `json:"mode"`
	Args   *strictInner           `json:"args,omitempty"`
	List   []strictInner          `json:"list,omitempty"`
	ByName map[string]strictInner `json:"byName,omitempty"`
	Free   map[string]any         `json:"free,omitempty"`
	GPUs   List                   `json:"gpus,omitempty"`
	Hidden string                 `json:"-"`
}

func TestDecodeStrict(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // "" : accepted
		check    func(strictTarget) bool
	}{
		{name: "plain", in: `{"name":"n","mode":"move","args":{"pool":"p"}}`, check: func(v strictTarget) bool {
			return v.Name == "n" && v.Mode == "move" && v.Args.Pool == "p"
		}},
		{name: "upper case key", in: `{"mode":"move","MODE":"macvlan"}`, want: `"MODE": keys are case-sensitive, write "mode"`},
		{name: "mixed case key alone", in: `{"Mode":"macvlan"}`, want: `write "mode"`},
		{name: "case in embedded", in: `{"NAME":"x"}`, want: `write "name"`},
		{name: "nested case", in: `{"args":{"POOL":"x"}}`, want: `"args.POOL"`},
		{name: "in list", in: `{"list":[{"pool":"a"},{"Pool":"b"}]}`, want: `"list[1].Pool"`},
		{name: "in map value", in: `{"byName":{"x":{"pol":"a"}}}`, want: `"byName.x.pol"`},
		{name: "unknown", in: `{"mdoe":"move"}`, want: `unknown field "mdoe"`},
		{name: "dash field", in: `{"Hidden":"x"}`, want: `unknown field "Hidden"`},
		{name: "twice", in: `{"mode":"move","mode":"macvlan"}`, want: `"mode" is given twice`},
		{name: "trailing", in: `{"mode":"move"} {"mode":"x"}`, want: "trailing data"},
		{name: "free map", in: `{"free":{"ANY":{"Thing":1}}}`, check: func(v strictTarget) bool { return v.Free["ANY"] != nil }},
		{name: "unmarshaler", in: `{"gpus":"0,1"}`, check: func(v strictTarget) bool { return v.GPUs.String() == "0,1" }},
		{name: "null nested", in: `{"args":null}`, check: func(v strictTarget) bool { return v.Args == nil }},
		{name: "type error", in: `{"mode":3}`, want: "cannot unmarshal"},
		{name: "not an object", in: `[1]`, want: "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v strictTarget
			err := DecodeStrict([]byte(tt.in), &v)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("DecodeStrict(%s) = %v, want error with %q", tt.in, err, tt.want)
				}
				return
			}
			if err != nil || !tt.check(v) {
				t.Fatalf("DecodeStrict(%s) = %+v, %v", tt.in, v, err)
			}
		})
	}
}

func TestDecodeStrictKeyError(t *testing.T) {
	var v strictTarget
	err := DecodeStrict([]byte(`{"Mode":"x"}`), &v)
	var keyErr *KeyError
	if !errors.As(err, &keyErr) || keyErr.Path != "Mode" || keyErr.Want != "mode" {
		t.Fatalf("err = %#v, want a *KeyError for Mode", err)
	}
}

func FuzzDecodeStrict(f *testing.F) {
	for _, seed := range []string{`{"name":"n","mode":"move","args":{"pool":"p"}}`, `{"MODE":1}`, `{"list":[{"pool":"a"}]}`, `{`, `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var strict, loose strictTarget
		if DecodeStrict(data, &strict) != nil {
			return
		}
		// Whatever the strict decoder accepts, encoding/json accepts the same way.
		if err := json.Unmarshal(data, &loose); err != nil {
			t.Fatalf("strict accepted %q, encoding/json refused: %v", data, err)
		}
	})
}
