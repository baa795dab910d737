package cniconf

import (
	"strings"
	"testing"
)

func TestParseDocument(t *testing.T) {
	tests := []struct {
		name, data string
		wantErr    string
		wantTypes  []string
	}{
		{name: "list", data: " {\"name\":\"n\", \"plugins\" : [ {\"type\":\"a\"} ,\n{\"type\":\"b\"}]}\n", wantTypes: []string{"a", "b"}},
		{name: "plugins before name", data: `{"plugins":[{"type":"a"}],"name":"n"}`, wantTypes: []string{"a"}},
		{name: "no plugins", data: `{"name":"n","type":"bridge"}`},
		{name: "not an object", data: `[1]`, wantErr: `want "{"`},
		{name: "trailing text", data: `{"name":"n"} {}`, wantErr: "text after the closing"},
		{name: "plugins not a list", data: `{"plugins":{"type":"a"}}`, wantErr: `"plugins": want "["`},
		{name: "plugin not an object", data: `{"plugins":["a"]}`, wantErr: "plugins[0]: want a JSON object"},
		{name: "type not a string", data: `{"plugins":[{"type":1}]}`, wantErr: "plugins[0]"},
		{name: "duplicate plugins", data: `{"plugins":[],"plugins":[]}`, wantErr: `key "plugins" appears twice`},
		{name: "cut short", data: `{"plugins":[{"type":"a"}`, wantErr: "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parseDocument([]byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, p := range doc.plugins {
				types = append(types, p.typ)
				if el := tt.data[p.start:p.end]; el[0] != '{' || el[len(el)-1] != '}' {
					t.Errorf("plugin span %q is not the element", el)
				}
			}
			if strings.Join(types, ",") != strings.Join(tt.wantTypes, ",") {
				t.Errorf("types %v, want %v", types, tt.wantTypes)
			}
			if string(doc.value("name")) != `"n"` {
				t.Errorf("name = %s", doc.value("name"))
			}
		})
	}
}

// The entry follows the layout of the list's elements.
func TestLayout(t *testing.T) {
	entry := []byte(`{"type":"rail","capabilities":{"x":true}}`)
	tests := []struct{ gap, want string }{
		{" ", `{"type":"rail","capabilities":{"x":true}}`},
		{"\n    ", "{\n      \"type\": \"rail\",\n      \"capabilities\": {\n        \"x\": true\n      }\n    }"},
		{"\n\t", "{\n\t\t\"type\": \"rail\",\n\t\t\"capabilities\": {\n\t\t\t\"x\": true\n\t\t}\n\t}"},
	}
	for _, tt := range tests {
		if got := string(layout(entry, []byte(tt.gap))); got != tt.want {
			t.Errorf("layout after %q:\n%s\nwant\n%s", tt.gap, got, tt.want)
		}
	}
}
