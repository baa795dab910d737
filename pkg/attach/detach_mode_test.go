package attach

import (
	"strings"
	"testing"
)

// TestDetachTakesModeFromAlias: a DEL may come with a netconf whose mode
// changed since ADD, or with no lease at all; what Detach undoes is read
// from the link, so the NIC comes back whatever the caller believes.
func TestDetachTakesModeFromAlias(t *testing.T) {
	tests := []struct {
		name       string
		attachMode Mode
		detachMode Mode // what a stale caller passes ("" : unknown)
	}{
		{"moved, caller knows nothing", ModeMove, ""},
		{"macvlan child, caller knows nothing", ModeMacvlan, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			parent := e.addNIC(1500, true)
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
			s := Spec{Mode: tt.attachMode, Parent: parent, Name: "rail0", Addresses: prefixes("10.10.0.5/24")}
			if _, err := e.attach(s); err != nil {
				t.Fatalf("Attach: %v", err)
			}
			if err := e.detach(Spec{Mode: tt.detachMode, Name: "rail0"}); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			assertSame(t, "host netns after Detach", e.host, hostBefore)
			assertSame(t, "pod netns after Detach", e.pod, podBefore)
		})
	}
}

// TestDetachLeavesForeignLinks: with no mode given, a pod link that rail
// did not make (the primary's eth0) is left exactly as it is.
func TestDetachLeavesForeignLinks(t *testing.T) {
	e := newTestEnv(t)
	e.addPodVeth("eth0")
	podBefore, hostBefore := snapshot(t, e.pod), snapshot(t, e.host)
	if err := e.detach(Spec{Name: "eth0"}); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	assertSame(t, "pod netns", e.pod, podBefore)
	assertSame(t, "host netns", e.host, hostBefore)
}

func TestFitOwner(t *testing.T) {
	base := Spec{Mode: ModeMove, Parent: "ens1np0", Name: "rail0", RDMADevice: "mlx5_0", Table: 101}
	long, mid := strings.Repeat("n", 120), strings.Repeat("m", 80)
	tests := []struct {
		name string
		in   Owner
		want Owner
	}{
		{"fits", Owner{Sandbox: "abc", CNIIfName: "eth0", Network: "net", Pool: "p", NIC: "mlx5_0"},
			Owner{Sandbox: "abc", CNIIfName: "eth0", Network: "net", Pool: "p", NIC: "mlx5_0"}},
		{"unparseable network left out", Owner{Sandbox: "abc", Network: "a:b", Pool: "p"}, Owner{Sandbox: "abc", Pool: "p"}},
		{"too long: the pool goes first", Owner{Sandbox: strings.Repeat("a", 64), CNIIfName: "eth0", Network: mid, Pool: long, NIC: "mlx5_0"},
			Owner{Sandbox: strings.Repeat("a", 64), CNIIfName: "eth0", Network: mid, NIC: "mlx5_0"}},
		{"port 2 fits", Owner{Sandbox: "abc", NIC: "mlx4_0", NICPort: "2"}, Owner{Sandbox: "abc", NIC: "mlx4_0", NICPort: "2"}},
		{"too long: the NIC goes with its port", Owner{Sandbox: strings.Repeat("a", 64), CNIIfName: "eth0", Network: strings.Repeat("n", 100),
			Pool: "p", NIC: "mlx4_0", NICPort: "2"}, Owner{Sandbox: strings.Repeat("a", 64), CNIIfName: "eth0", Network: strings.Repeat("n", 100)}},
	}
	for _, tt := range tests {
		got := FitOwner(base, tt.in)
		if got != tt.want {
			t.Errorf("%s: FitOwner = %+v, want %+v", tt.name, got, tt.want)
		}
		s := base
		s.Owner = got
		if err := validateOwner(s); err != nil {
			t.Errorf("%s: the fitted owner is refused: %v", tt.name, err)
		}
	}
}
