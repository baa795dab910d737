package topology

import (
	"encoding/json"
	"testing"
)

func TestClassText(t *testing.T) {
	tests := []struct {
		class Class
		text  string
	}{
		{PIX, "PIX"}, {PXB, "PXB"}, {PHB, "PHB"}, {NODE, "NODE"}, {SYS, "SYS"},
	}
	for _, tc := range tests {
		if got := tc.class.String(); got != tc.text {
			t.Errorf("%d.String() = %q, want %q", int(tc.class), got, tc.text)
		}
		for _, in := range []string{tc.text, " " + tc.text + "\n", string(append([]byte{tc.text[0] | 0x20}, tc.text[1:]...))} {
			got, err := ParseClass(in)
			if err != nil || got != tc.class {
				t.Errorf("ParseClass(%q) = %v, %v; want %v", in, got, err, tc.class)
			}
		}
		b, err := json.Marshal(map[string]Class{"c": tc.class})
		if err != nil || string(b) != `{"c":"`+tc.text+`"}` {
			t.Errorf("json = %s, %v", b, err)
		}
		var back map[string]Class
		if err := json.Unmarshal(b, &back); err != nil || back["c"] != tc.class {
			t.Errorf("json round trip = %v, %v", back, err)
		}
	}
}

func TestClassBad(t *testing.T) {
	if _, err := ParseClass("NV12"); err == nil {
		t.Error("ParseClass(NV12) succeeded")
	}
	if s := Class(9).String(); s != "Class(9)" {
		t.Errorf("Class(9).String() = %q", s)
	}
	if _, err := json.Marshal(Class(-1)); err == nil {
		t.Error("marshal Class(-1) succeeded")
	}
	var c Class
	if err := json.Unmarshal([]byte(`"FAR"`), &c); err == nil {
		t.Error("unmarshal FAR succeeded")
	}
}
