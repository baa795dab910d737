package placement

import (
	"fmt"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// holderList is a Use that is not a Usage table: what raild's lease index
// looks like to placement.
type holderList []struct {
	nic string
	h   Holder
}

func (l holderList) Range(fn func(nic string, h Holder)) {
	for _, e := range l {
		fn(e.nic, e.h)
	}
}

func TestConstraintsAndHolders(t *testing.T) {
	use := holderList{
		{"mlx5_0", Holder{Sandbox: "s1", Namespace: "ns", Name: "a", Mode: api.ModeMacvlan}},
		{"mlx5_0", Holder{Sandbox: "s2", Namespace: "ns", Name: "b", Mode: api.ModeMacvlan}},
		{"mlx5_0", Holder{Sandbox: "s2", Namespace: "ns", Name: "b", Mode: api.ModeMacvlan}},
		{"mlx5_1", Holder{Sandbox: "s3", Mode: api.ModeMove}},
		// A VF's lease names its PF's port and holds the VF: no use of
		// the port (excludeVFHolders keeps exclusive modes off the PF).
		{"mlx5_0", Holder{Sandbox: "s4", Namespace: "ns", Name: "v", Mode: api.ModeVF, VF: "0000:19:00.2"}},
	}
	tests := []struct {
		mode    api.Mode
		exclude string
	}{
		{api.ModeMacvlan, "map[mlx5_1:moved into pod s3]"},
		{api.ModeMove, "map[mlx5_0:shared by 3 pod interface(s) of ns/a, ns/b in macvlan mode; move needs it alone mlx5_1:moved into pod s3]"},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			exclude, load, _ := constraints(use, tt.mode)
			if got := fmt.Sprint(exclude); got != tt.exclude {
				t.Errorf("exclude = %s, want %s", got, tt.exclude)
			}
			if got := fmt.Sprint(load); got != "map[mlx5_0:3 mlx5_1:1]" {
				t.Errorf("load = %s", got)
			}
		})
	}
	if got := fmt.Sprint(Holders(use)); got != "map[0000:19:00.2:ns/v mlx5_0:ns/a, ns/b mlx5_1:s3]" {
		t.Errorf("Holders = %s", got)
	}
}
