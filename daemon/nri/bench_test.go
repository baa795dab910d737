package nri

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/api"
)

// BenchmarkCreateContainer measures the hook as raild runs it (logging at
// Info into a discarding JSON handler, counted and timed in its metrics)
// and reports the p50/p99 of the
// individual calls. Run with -benchtime=10000x for the p99 over 10k calls.
func BenchmarkCreateContainer(b *testing.B) {
	cases := []struct {
		name    string
		cfg     Config
		setup   func(*fakeState)
		kubelet *fakeKubelet
		gids    bool
		topo    string // raild's topologyFile
		pod     *nriapi.PodSandbox
		ctr     *nriapi.Container
	}{
		{name: "no-lease", pod: pod("s1", "default", nil), ctr: ctr("app", "PATH=/bin")},
		{
			name:  "move-2nics",
			setup: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0", "mlx5_1") },
			pod:   pod("s1", "default", nil), ctr: ctr("app", "PATH=/bin", "HOME=/root"),
		},
		{
			name:  "macvlan-gid-cached",
			gids:  true,
			setup: func(f *fakeState) { f.add("s1", api.ModeMacvlan, "10.56.0.5/24", "mlx5_0") },
			pod:   pod("s1", "default", nil), ctr: ctr("app", "PATH=/bin"),
		},
		{
			name:  "move-every-variable",
			gids:  true,
			topo:  "/etc/rail-topology/topology.xml",
			setup: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
			pod:   pod("s1", "default", nil), ctr: ctr("app", "PATH=/bin"),
		},
		{
			name: "gpu-auto-cdi-8ids",
			cfg:  Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}},
			pod:  pod("s1", "default", nil),
			ctr: withCDI(ctr("app"), "nvidia.com/gpu=0", "nvidia.com/gpu=1", "nvidia.com/gpu=2", "nvidia.com/gpu=3",
				"nvidia.com/gpu=GPU-00000001-aaaa-bbbb-cccc-dddddddddddd", "nvidia.com/gpu=0:1", "nvidia.com/gpu=2:0", "nvidia.com/gpu=3"),
		},
		{
			name:    "gpu-auto-kubelet-cached",
			cfg:     Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}},
			kubelet: &fakeKubelet{pods: map[string]map[string][]string{"default/p-s1": {"app": {"0", "1"}}}},
			pod:     pod("s1", "default", nil), ctr: ctr("app", "PATH=/bin"),
		},
		{
			name: "annotation-refused",
			cfg:  Config{AnnotationNamespaces: []string{"default"}},
			pod:  pod("s1", "default", map[string]string{"rail.dev/devices": "uverbs0,/dev/sda"}),
			ctr:  ctr("app"),
		},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			root := b.TempDir()
			if c.gids {
				writeGIDs(b, root, "mlx5_0", []string{"fe80:0000:0000:0000:0a00:27ff:fe00:0001",
					"0000:0000:0000:0000:0000:ffff:0a38:0005"}, []string{"RoCE v2", "RoCE v2"})
			}
			st := newFakeState()
			if c.setup != nil {
				c.setup(st)
			}
			var gpus *podinfo.GPUSource
			if c.kubelet != nil {
				gpus = &podinfo.GPUSource{Kubelet: c.kubelet}
			}
			if gpus != nil {
				gpus.Machine = fixed(testMachine(root))
			}
			p, err := New(Options{Config: c.cfg, Machine: fixed(testMachine(root)), State: st, GPUs: gpus, TopologyFile: c.topo,
				Hooks: metrics.New().NRIHooks, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			if err := p.RunPodSandbox(b.Context(), c.pod); err != nil {
				b.Fatal(err)
			}
			if p.kubelet != nil {
				<-p.kubelet.start(c.pod).done
			}
			samples := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				_, _, err := p.CreateContainer(b.Context(), c.pod, c.ctr)
				samples = append(samples, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			slices.Sort(samples)
			b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}
