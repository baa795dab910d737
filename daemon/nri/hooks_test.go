package nri

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// TestHooksAreCountedAndTimed: every hook the plugin implements counts one
// call under its result and observes its latency once; a hook whose work
// failed (a release that did not happen) counts as an error, though the
// runtime's call still succeeds.
func TestHooksAreCountedAndTimed(t *testing.T) {
	sandbox := pod("s1", "default", nil)
	tests := []struct {
		hook    string
		failing bool // the lease store refuses the release
		call    func(context.Context, *Plugin) error
		want    metrics.Tally
	}{
		{hook: hookRunPodSandbox, call: func(ctx context.Context, p *Plugin) error { return p.RunPodSandbox(ctx, sandbox) },
			want: metrics.Tally{OK: 1, Timed: 1}},
		{hook: hookCreateContainer, call: func(ctx context.Context, p *Plugin) error {
			_, _, err := p.CreateContainer(ctx, sandbox, ctr("app"))
			return err
		}, want: metrics.Tally{OK: 1, Timed: 1}},
		{hook: hookStopPodSandbox, call: func(ctx context.Context, p *Plugin) error { return p.StopPodSandbox(ctx, sandbox) },
			want: metrics.Tally{OK: 1, Timed: 1}},
		{hook: hookRemovePodSandbox, call: func(ctx context.Context, p *Plugin) error { return p.RemovePodSandbox(ctx, sandbox) },
			want: metrics.Tally{OK: 1, Timed: 1}},
		{hook: hookRemovePodSandbox, failing: true, call: func(ctx context.Context, p *Plugin) error { return p.RemovePodSandbox(ctx, sandbox) },
			want: metrics.Tally{Failed: 1, Timed: 1}},
		{hook: hookSynchronize, call: func(ctx context.Context, p *Plugin) error {
			_, err := p.Synchronize(ctx, []*nriapi.PodSandbox{sandbox, pod("s2", "default", nil)}, nil)
			return err
		}, want: metrics.Tally{OK: 1, Timed: 1}},
	}
	for _, tt := range tests {
		name := tt.hook
		if tt.failing {
			name += " failing"
		}
		t.Run(name, func(t *testing.T) {
			st := newFakeState()
			st.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0")
			if tt.failing {
				st.err = errors.New("store closed")
			}
			m := metrics.New()
			p, err := New(Options{Config: Config{StopGrace: "1h"}, Machine: fixed(testMachine(t.TempDir())), State: st,
				Hooks: m.NRIHooks, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.cancelAllReleases)
			if err := tt.call(t.Context(), p); err != nil {
				t.Fatalf("%s returned %v to the runtime", tt.hook, err)
			}
			if got := m.NRIHooks.Tally(tt.hook); got != tt.want {
				t.Errorf("%s: %+v, want %+v", tt.hook, got, tt.want)
			}
		})
	}
}

// TestHookLoggerCarriesThePod: what a hook logs names the hook, the pod,
// its sandbox and the container, and an error under "error".
func TestHookLoggerCarriesThePod(t *testing.T) {
	st := newFakeState()
	st.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0", "mlx5_gone")
	p, logs := newTestPlugin(t, Config{AnnotationNamespaces: []string{"default"}}, t.TempDir(), st)
	sandbox := pod("s1", "default", map[string]string{api.AnnotationDevices: "/dev/sda"})
	if _, _, err := p.CreateContainer(t.Context(), sandbox, ctr("app")); err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"leased NIC unknown", "refused device annotation", "injecting RDMA devices"} {
		recs := logs.records(t, msg)
		if len(recs) != 1 {
			t.Fatalf("%q logged %d times:\n%s", msg, len(recs), logs)
		}
		r := recs[0]
		if r["hook"] != hookCreateContainer || r["pod"] != "default/p-s1" || r["sandbox"] != "s1" || r["container"] != "app" ||
			r["component"] != "nri" {
			t.Errorf("%q: %v; want the hook, pod, sandbox, container and component", msg, r)
		}
	}
	if r := logs.records(t, "refused device annotation")[0]; r["error"] == nil {
		t.Errorf("refusal without an error key: %v", r)
	}
}

// TestAutoInjectFollowsTheLiveMachine: gpuAutoInject reads the GPUs' NICs
// from the machine as it is now: once the inventory publishes a machine
// without mlx5_0, GPU 0's container gets the NIC now closest to it.
func TestAutoInjectFollowsTheLiveMachine(t *testing.T) {
	before := testMachine(t.TempDir())
	after := &topology.Machine{GPUs: before.GPUs, NICs: before.NICs[1:]}
	after.Root, after.RdmaCM = before.Root, before.RdmaCM
	next, ok := after.Affinity()[0]
	if !ok || next == "mlx5_0" {
		t.Fatalf("GPU 0's NIC without mlx5_0 is %q", next)
	}
	var live atomic.Pointer[topology.Machine]
	live.Store(before)
	cfg := Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}}
	p, err := New(Options{Config: cfg, Machine: live.Load, State: newFakeState()})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		machine *topology.Machine
		want    string
	}{{before, "=mlx5_0"}, {after, "=" + next}} {
		live.Store(step.machine)
		adj, _, err := p.CreateContainer(t.Context(), pod("s1", "default", nil), withCDI(ctr("app"), "nvidia.com/gpu=0"))
		if err != nil {
			t.Fatal(err)
		}
		if got := summarize(adj).Env[envNCCLHCA]; got != step.want {
			t.Errorf("%s = %q, want %q", envNCCLHCA, got, step.want)
		}
	}
}
