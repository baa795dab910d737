package placement

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestLimitsCheckMode: the modes a node serves, and a softRoCE node's
// refusal of move mode, which names why and what to use.
func TestLimitsCheckMode(t *testing.T) {
	tests := []struct {
		limits Limits
		mode   api.Mode
		want   string // "" for no error
	}{
		{Limits{}, api.ModeMove, ""},
		{Limits{}, api.ModeIPVLAN, ""},
		{Limits{Modes: []api.Mode{api.ModeMove}, Source: "node class v100"}, api.ModeIPVLAN, "not served on this node (node class v100 modes: move)"},
		{Limits{SoftRoCE: true}, api.ModeMove, "refused on a softRoCE node"},
		{Limits{SoftRoCE: true}, api.ModeMacvlan, ""},
		{Limits{SoftRoCE: true}, api.ModeIPVLAN, ""},
		{Limits{SoftRoCE: true}, api.ModeVF, ""},
	}
	for _, tt := range tests {
		err := tt.limits.checkMode(tt.mode)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v mode %s: %v, want %q", tt.limits, tt.mode, err, tt.want)
		}
	}
}

// TestLimitsServedModes: what the node publishes as served is its modes
// list (nil: every mode), without move on a softRoCE node.
func TestLimitsServedModes(t *testing.T) {
	tests := []struct {
		limits Limits
		want   string
	}{
		{Limits{}, ""},
		{Limits{Modes: []api.Mode{api.ModeMove, api.ModeMacvlan}}, "move, macvlan"},
		{Limits{SoftRoCE: true}, "macvlan, ipvlan, ipoib, vf"},
		{Limits{SoftRoCE: true, Modes: []api.Mode{api.ModeMove, api.ModeIPVLAN}}, "ipvlan"},
	}
	for _, tt := range tests {
		if got := api.ModeList(tt.limits.ServedModes()); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.limits, got, tt.want)
		}
	}
}
