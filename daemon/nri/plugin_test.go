package nri

import (
	"context"
	"reflect"
	"testing"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func boolPtr(b bool) *bool { return &b }

// writeGIDs fakes <root>/sys/class/infiniband/<nic>/ports/1/gids and types.
func writeGIDs(t testing.TB, root, nic string, gids, types []string) {
	t.Helper()
	if err := fakesys.WriteGIDs(root, nic, 1, gids, types); err != nil {
		t.Fatal(err)
	}
}

func TestCreateContainer(t *testing.T) {
	const (
		zeroGID = "0000:0000:0000:0000:0000:0000:0000:0000"
		linkGID = "fe80:0000:0000:0000:0a00:27ff:fe00:0001"
		podGID  = "0000:0000:0000:0000:0000:ffff:0a38:0005" // ::ffff:10.56.0.5
	)
	memlock := "RLIMIT_MEMLOCK 8388608/8388608"
	tests := []struct {
		name   string
		cfg    Config
		leases func(*fakeState)
		gids   bool
		pod    *nriapi.PodSandbox
		ctr    *nriapi.Container
		want   summary
	}{{
		name: "no lease: nothing",
		pod:  pod("s1", "default", nil), ctr: ctr("app"),
	}, {
		name:   "one leased NIC in move mode",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		pod:    pod("s1", "default", nil), ctr: ctr("app"),
		want: summary{
			Devices: []string{dev("uverbs0", 231, 192), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0", envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0"},
		},
	}, {
		name: "two leases, one NIC each, and a NIC listed twice",
		leases: func(f *fakeState) {
			f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_2")
			f.add("s1", api.ModeMove, "10.57.0.5/24", "mlx5_1", "mlx5_2")
		},
		pod: pod("s1", "default", nil), ctr: ctr("app"),
		want: summary{
			Devices: []string{dev("uverbs2", 231, 194), dev("uverbs1", 231, 193), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLSocketIf: "=eth0", envNCCLHCA: "=mlx5_2,mlx5_1", envUCXDevices: "mlx5_2:1,mlx5_1:1", envMCFilters: "mlx5_2,mlx5_1"},
		},
	}, {
		name:   "umad and issm when configured; issm is optional",
		cfg:    Config{UMAD: true},
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0", "mlx5_1") },
		pod:    pod("s1", "default", nil), ctr: ctr("app"),
		want: summary{
			Devices: []string{dev("uverbs0", 231, 192), dev("umad0", 231, 0), dev("issm0", 231, 64),
				dev("uverbs1", 231, 193), dev("umad1", 231, 1), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0", envNCCLHCA: "=mlx5_0,mlx5_1", envUCXDevices: "mlx5_0:1,mlx5_1:1", envMCFilters: "mlx5_0,mlx5_1"},
		},
	}, {
		name:   "variables the container sets are left alone",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		pod:    pod("s1", "default", nil), ctr: ctr("app", "NCCL_IB_HCA=mlx5_7", "PATH=/bin"),
		want: summary{
			Devices: []string{dev("uverbs0", 231, 192), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0", envUCXDevices: "mlx5_0:1"},
		},
	}, {
		name:   "ncclEnv off",
		cfg:    Config{NCCLEnv: boolPtr(false)},
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		pod:    pod("s1", "default", nil), ctr: ctr("app"),
		want: summary{
			Devices: []string{dev("uverbs0", 231, 192), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
		},
	}, {
		name:   "memlock unlimited by default is not lowered nor repeated",
		cfg:    Config{Memlock: "unlimited"},
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		pod:    pod("s1", "default", nil),
		ctr: &nriapi.Container{Name: "app", Rlimits: []*nriapi.POSIXRlimit{
			{Type: "RLIMIT_MEMLOCK", Hard: rlimInfinity, Soft: rlimInfinity}}},
		want: summary{
			Devices: []string{dev("uverbs0", 231, 192), dev("rdma_cm", 10, 58)},
			Env:     map[string]string{envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0", envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0"},
		},
	}, {
		name:   "macvlan: GID index of the pod's address, RoCE v2 preferred",
		gids:   true,
		leases: func(f *fakeState) { f.add("s1", api.ModeMacvlan, "10.56.0.5/24", "mlx5_0") },
		pod:    pod("s1", "default", nil), ctr: ctr("app"),
		want: summary{
			Devices: []string{dev("uverbs0", 231, 192), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0", envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0", envNCCLGIDIndex: "3", envUCXGIDIndex: "3", envMCGIDIndex: "3"},
		},
	}, {
		name:   "macvlan: GID index the container sets wins",
		gids:   true,
		leases: func(f *fakeState) { f.add("s1", api.ModeMacvlan, "10.56.0.5/24", "mlx5_0") },
		pod:    pod("s1", "default", nil), ctr: ctr("app", "NCCL_IB_GID_INDEX=0"),
		want: summary{
			Devices: []string{dev("uverbs0", 231, 192), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0", envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0"},
		},
	}, {
		name:   "macvlan: address not in the GID table, no index",
		leases: func(f *fakeState) { f.add("s1", api.ModeMacvlan, "10.56.0.9/24", "mlx5_0") },
		gids:   true,
		pod:    pod("s1", "default", nil), ctr: ctr("app"),
		want: summary{
			Devices: []string{dev("uverbs0", 231, 192), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0", envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0"},
		},
	}, {
		name:   "lease on a NIC the topology does not know: nothing",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_9") },
		pod:    pod("s1", "default", nil), ctr: ctr("app"),
	}, {
		name:   "lease on a NIC whose sysfs names a block device: nothing",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_bad") },
		pod:    pod("s1", "default", nil), ctr: ctr("app"),
	}, {
		name: "gpuAutoInject: CDI GPUs by index and UUID get their affine NICs",
		cfg:  Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"default"}},
		pod:  pod("s1", "default", nil),
		ctr:  withCDI(ctr("app"), "nvidia.com/gpu=1", "nvidia.com/gpu=GPU-00000002-aaaa-bbbb-cccc-dddddddddddd"),
		want: summary{
			Devices: []string{dev("uverbs1", 231, 193), dev("uverbs2", 231, 194), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLHCA: "=mlx5_1,mlx5_2", envUCXDevices: "mlx5_1:1,mlx5_2:1", envMCFilters: "mlx5_1,mlx5_2"},
		},
	}, {
		name: "gpuAutoInject off: CDI GPUs ignored",
		pod:  pod("s1", "default", nil), ctr: withCDI(ctr("app"), "nvidia.com/gpu=all"),
	}, {
		name: "gpuAutoInject: namespace not listed",
		cfg:  Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"gpu"}},
		pod:  pod("s1", "default", nil), ctr: withCDI(ctr("app"), "nvidia.com/gpu=all"),
	}, {
		name:   "gpuAutoInject: a lease wins over the GPUs",
		cfg:    Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}},
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_3") },
		pod:    pod("s1", "default", nil), ctr: withCDI(ctr("app"), "nvidia.com/gpu=0"),
		want: summary{
			Devices: []string{dev("uverbs3", 231, 195), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0", envNCCLHCA: "=mlx5_3", envUCXDevices: "mlx5_3:1", envMCFilters: "mlx5_3"},
		},
	}, {
		name: "annotation in an allowed namespace",
		cfg:  Config{AnnotationNamespaces: []string{"hpc"}},
		pod:  pod("s1", "hpc", map[string]string{"rail.dev/devices": "uverbs3, rdma_cm"}), ctr: ctr("app"),
		want: summary{
			Devices: []string{dev("uverbs3", 231, 195), dev("rdma_cm", 10, 58)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLHCA: "=mlx5_3", envUCXDevices: "mlx5_3:1", envMCFilters: "mlx5_3"},
		},
	}, {
		name: "per-container annotation wins over the pod's; umad chosen with UMAD config",
		cfg:  Config{AnnotationNamespaces: []string{"*"}, UMAD: true},
		pod: pod("s1", "hpc", map[string]string{
			"rail.dev/devices": "uverbs3", "rail.dev/devices.app": "umad2"}),
		ctr: ctr("app"),
		want: summary{
			Devices: []string{dev("umad2", 231, 2)},
			Rlimits: []string{memlock},
		},
	}, {
		name:   "lease plus annotation: union, each device once",
		cfg:    Config{AnnotationNamespaces: []string{"hpc"}},
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		pod:    pod("s1", "hpc", map[string]string{"rail.dev/devices": "rdma_cm,uverbs0,uverbs1"}), ctr: ctr("app"),
		want: summary{
			Devices: []string{dev("uverbs0", 231, 192), dev("rdma_cm", 10, 58), dev("uverbs1", 231, 193)},
			Rlimits: []string{memlock},
			Env:     map[string]string{envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0", envNCCLHCA: "=mlx5_0,mlx5_1", envUCXDevices: "mlx5_0:1,mlx5_1:1", envMCFilters: "mlx5_0,mlx5_1"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.gids {
				writeGIDs(t, root, "mlx5_0",
					[]string{linkGID, zeroGID, podGID, podGID},
					[]string{"RoCE v2", "RoCE v2", "IB/RoCE v1", "RoCE v2"})
			}
			st := newFakeState()
			if tt.leases != nil {
				tt.leases(st)
			}
			if tt.cfg.Memlock == "" {
				tt.cfg.Memlock = "8Mi"
			}
			p, logs := newTestPlugin(t, tt.cfg, root, st)
			adj, updates, err := p.CreateContainer(context.Background(), tt.pod, tt.ctr)
			if err != nil || updates != nil {
				t.Fatalf("CreateContainer: err %v, updates %v", err, updates)
			}
			got := summarize(adj)
			if len(tt.want.Devices) == 0 && adj != nil {
				t.Fatalf("want no adjustment, got %v", got)
			}
			if tt.want.Env == nil {
				tt.want.Env = map[string]string{}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("adjustment\n got %v\nwant %v\nlogs:\n%s", got, tt.want, logs)
			}
		})
	}
}
