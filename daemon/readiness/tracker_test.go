package readiness

import (
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// sink records the conditions handed to it.
type sink struct {
	mu  sync.Mutex
	got []Condition
}

func (s *sink) RDMAReady(c Condition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, c)
}

func (s *sink) take() []Condition {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.got
	s.got = nil
	return out
}

func TestTrackerTransitions(t *testing.T) {
	root := machine(t, "lab-1x1")
	gids("fe80::1", "::ffff:192.168.50.7")(t, root)
	netnsPath := podNetns(t, true, "192.168.50.7/24")
	pods := []Pod{{Namespace: "ml", Name: "trainer", UID: "u1", Sandbox: "s1", Rails: []Rail{{
		Netns: netnsPath, IfName: "rail0", Addresses: []netip.Prefix{netip.MustParsePrefix("192.168.50.7/24")},
		Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, Mode: api.ModeMacvlan, GIDIndex: 1,
	}}}}
	var mu sync.Mutex
	list := func() []Pod { mu.Lock(); defer mu.Unlock(); return pods }
	out := &sink{}
	reg := prometheus.NewRegistry()
	tr, err := NewTracker(Options{Checker: checker(t, root, ""), Pods: list, Sink: out, Registerer: reg})
	must(t, err)

	steps := []struct {
		name   string
		before func()
		want   []string // "ready reason down" of each condition handed over
		ready  float64
		notRdy float64
	}{
		{name: "first check: ready", want: []string{"true RDMAReady false"}, ready: 1},
		{name: "nothing changed: nothing written", ready: 1},
		{name: "port down", before: func() { must(t, fakesys.SetPortState(root, "mlx5_0", 1, "DOWN")) },
			want: []string{"false PortNotActive true"}, notRdy: 1},
		{name: "still down: no second event", notRdy: 1},
		{name: "port back", before: func() { must(t, fakesys.SetPortState(root, "mlx5_0", 1, "ACTIVE")) },
			want: []string{"true RDMAReady false"}, ready: 1},
		{name: "GID gone", before: func() { gids("fe80::1", "::ffff:192.168.50.9")(t, root) },
			want: []string{"false GIDMissing true"}, notRdy: 1},
		{name: "pod gone", before: func() { mu.Lock(); pods = nil; mu.Unlock() }},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		tr.CheckAll()
		var got []string
		for _, c := range out.take() {
			got = append(got, strings.Join([]string{stateLabel(c.Ready), c.Reason, stateLabel(c.Down)}, " "))
			if c.Namespace != "ml" || c.Name != "trainer" || c.UID != "u1" || (!c.Ready && !strings.Contains(c.Message, "raild doctor --pod ml/trainer")) {
				t.Fatalf("%s: condition %+v", st.name, c)
			}
		}
		if strings.Join(got, "|") != strings.Join(st.want, "|") {
			t.Fatalf("%s: conditions %q, want %q", st.name, got, st.want)
		}
		if r, n := testutil.ToFloat64(tr.metrics.pods.WithLabelValues("true")), testutil.ToFloat64(tr.metrics.pods.WithLabelValues("false")); r != st.ready || n != st.notRdy {
			t.Fatalf("%s: ready pods %v/%v, want %v/%v", st.name, r, n, st.ready, st.notRdy)
		}
	}
	if down, up := testutil.ToFloat64(tr.metrics.transitions.WithLabelValues("false")), testutil.ToFloat64(tr.metrics.transitions.WithLabelValues("true")); down != 2 || up != 1 {
		t.Fatalf("transitions to false %v, to true %v; want 2, 1", down, up)
	}
}

func TestSummary(t *testing.T) {
	res := Result{Checks: []api.ReadinessCheck{
		pass(checkInterface, "rail0", "ok"),
		fail(checkPort, "rail0", ReasonPortNotActive, "mlx5_0 port 1 is DOWN, want ACTIVE", "check the cable"),
		fail(checkMemlock, "container app", ReasonMemlockTooLow, "too low", "raise it"),
		skip(checkDevices, "container side", "has not started yet"),
	}}
	reason, msg := res.Summary("ml/trainer")
	want := "rail0: mlx5_0 port 1 is DOWN, want ACTIVE; fix: check the cable (and 1 more failing check(s)); see `raild doctor --pod ml/trainer` on the node"
	if res.Ready() || reason != ReasonPortNotActive || msg != want {
		t.Fatalf("summary %s %q, want %s %q", reason, msg, ReasonPortNotActive, want)
	}
	ok := Result{Checks: []api.ReadinessCheck{pass(checkInterface, "rail0", "ok"), skip(checkDevices, "container app", "not started")}}
	if reason, _ := ok.Summary("ml/trainer"); !ok.Ready() || reason != ReasonReady {
		t.Fatalf("skips fail the pod: %s", reason)
	}
	none := (&Checker{}).Run(Pod{Namespace: "ml", Name: "x"})
	if none.Ready() {
		t.Fatal("a pod without rails is ready")
	}
}
