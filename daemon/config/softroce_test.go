package config

import (
	"fmt"
	"testing"
)

// TestSoftRoCEKey checks softRoCE at the top level and in a node class:
// a class's value wins on its nodes, either way; other nodes keep the
// top-level one.
func TestSoftRoCEKey(t *testing.T) {
	tests := []struct {
		top, class string // "" leaves the key out
		labels     map[string]string
		want       bool
	}{
		{labels: map[string]string{"kind": "cloud"}, want: false},
		{class: "true", labels: map[string]string{"kind": "cloud"}, want: true},
		{class: "true", labels: map[string]string{"kind": "gpu"}, want: false},
		{top: "true", labels: map[string]string{"kind": "gpu"}, want: true},
		{top: "true", class: "false", labels: map[string]string{"kind": "cloud"}, want: false},
		{top: "true", labels: map[string]string{"kind": "cloud"}, want: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("top=%s,class=%s,%s", tt.top, tt.class, tt.labels["kind"]), func(t *testing.T) {
			text := "kubernetes: {enabled: \"true\"}\nnodeName: n1\npools: []\n"
			if tt.top != "" {
				text += "softRoCE: " + tt.top + "\n"
			}
			text += "nodeClasses:\n  - name: cloud\n    nodeSelector: {matchLabels: {kind: cloud}}\n"
			if tt.class != "" {
				text += "    softRoCE: " + tt.class + "\n"
			} else {
				text += "    modes: [macvlan]\n"
			}
			cfg := load(t, text)
			if _, err := cfg.ApplyNodeClass(tt.labels); err != nil {
				t.Fatal(err)
			}
			if cfg.SoftRoCE != tt.want {
				t.Errorf("softRoCE = %v, want %v", cfg.SoftRoCE, tt.want)
			}
		})
	}
}
