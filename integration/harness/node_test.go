package harness

import (
	"strings"
	"testing"
)

func TestCheckNamePrefix(t *testing.T) {
	tests := []struct {
		prefix  string
		wantErr bool
	}{
		{prefix: ""},
		{prefix: "rb"},
		{prefix: "rb2x9"},
		{prefix: "toolong", wantErr: true},
		{prefix: "RB", wantErr: true},
		{prefix: "r-b", wantErr: true},
		{prefix: "r/b", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			err := checkNamePrefix(tt.prefix)
			if (err != nil) != tt.wantErr {
				t.Fatalf("checkNamePrefix(%q) = %v, want error %v", tt.prefix, err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "NamePrefix") {
				t.Errorf("error %q does not name the field", err)
			}
		})
	}
}

// TestNewNodeRefusesBadPrefix: the prefix is checked before anything is
// created, so no root is needed and nothing is left.
func TestNewNodeRefusesBadPrefix(t *testing.T) {
	if _, err := NewNode(NodeOptions{Machine: "lab-1x1", NamePrefix: "much-too-long"}); err == nil ||
		!strings.Contains(err.Error(), `NamePrefix "much-too-long"`) {
		t.Fatalf("NewNode with a bad prefix: error %v, want one naming NamePrefix", err)
	}
}
