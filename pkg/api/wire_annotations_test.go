package api

import (
	"encoding/json"
	"testing"
)

// TestAnnotationsNoneVersusEmpty: raild tells "the runtime passed no
// annotations" (nil: ask the API server) from "the pod has none" (empty),
// so both must survive the socket.
func TestAnnotationsNoneVersusEmpty(t *testing.T) {
	tests := []struct {
		name      string
		sent      map[string]string
		wantNil   bool
		wantCount int
	}{
		{name: "runtime passed none", sent: nil, wantNil: true},
		{name: "pod has none", sent: map[string]string{}, wantNil: false},
		{name: "pod has some", sent: map[string]string{AnnotationPool: "decode"}, wantCount: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(AllocateRequest{Sandbox: "s", CNIIfName: "eth0", Annotations: tt.sent})
			if err != nil {
				t.Fatal(err)
			}
			var got AllocateRequest
			if err := DecodeStrict(data, &got); err != nil {
				t.Fatal(err)
			}
			if (got.Annotations == nil) != tt.wantNil || len(got.Annotations) != tt.wantCount {
				t.Errorf("sent %#v, got %#v (wire %s)", tt.sent, got.Annotations, data)
			}
		})
	}
}
