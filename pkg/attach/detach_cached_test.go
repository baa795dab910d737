package attach

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/railcni/rail/pkg/rdma"
)

// TestDetachFromCachedResult: the plugin may only know Mode and Name (a
// Spec rebuilt from the cached CNI result when raild forgot the lease).
// The alias and the addresses on the interface must be enough.
func TestDetachFromCachedResult(t *testing.T) {
	tests := []struct {
		name         string
		mode         Mode
		renameInPod  bool
		wantRDMAMove bool
	}{
		{"move", ModeMove, false, true},
		{"move renamed in the pod", ModeMove, true, true},
		{"macvlan", ModeMacvlan, false, false},
		{"macvlan renamed in the pod", ModeMacvlan, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			full := Spec{Mode: tt.mode, Parent: e.addNIC(1500, true), Name: "rail0", Table: 170, ArpTuning: true,
				Addresses: prefixes("10.10.0.5/24", "fd00:10::5/64"), Routes: []Route{route("10.20.0.0/16", "10.10.0.1")}}
			if tt.mode == ModeMove {
				full.RDMADevice, full.RDMANetns = "mlx5_3", rdma.NetnsExclusive
			}
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
			fake := &fakeRDMA{}
			a := attacher{moveRDMA: fake.move}
			if _, err := attachIn(e, a, full); err != nil {
				t.Fatalf("Attach: %v", err)
			}
			if tt.renameInPod {
				h := handle(t, e.pod)
				l := mustLinkIn(t, e.pod, full.Name)
				must(t, h.LinkSetDown(l))
				must(t, h.LinkSetName(l, "moved9"))
			}
			cached := Spec{Mode: tt.mode, Name: full.Name}
			if err := e.inHost(func() error { return a.detach(e.pod.Path(), cached) }); err != nil {
				t.Fatalf("Detach(%+v): %v", cached, err)
			}
			assertSame(t, "host netns", e.host, hostBefore)
			assertSame(t, "pod netns", e.pod, podBefore)
			var want []string
			if tt.wantRDMAMove {
				want = []string{fmt.Sprintf("mlx5_3 %q->%q", "", e.pod.Path()), fmt.Sprintf("mlx5_3 %q->%q", e.pod.Path(), "")}
			}
			if !reflect.DeepEqual(fake.calls, want) {
				t.Errorf("RDMA moves %v, want %v", fake.calls, want)
			}
		})
	}
}
