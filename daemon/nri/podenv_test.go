package nri

import (
	"net/netip"
	"reflect"
	"testing"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// GID table entries of the dualport-2s machine's RoCE card mlx4_1 as the
// tests write them: the link-local GID, then the pod addresses.
const (
	gidLinkLocal = "fe80:0000:0000:0000:0a00:27ff:fe00:0001"
	gidV4Pod5    = "0000:0000:0000:0000:0000:ffff:0a38:0005" // ::ffff:10.56.0.5
	gidV4Pod6    = "0000:0000:0000:0000:0000:ffff:0a38:0006" // ::ffff:10.56.0.6
	gidV4Other   = "0000:0000:0000:0000:0000:ffff:0a39:0006" // ::ffff:10.57.0.6
	gidV6Pod5    = "fd00:0056:0000:0000:0000:0000:0000:0005" // fd00:56::5
	gidV6Other   = "fd00:0057:0000:0000:0000:0000:0000:0006" // fd00:57::6
)

// commsMachine writes dualport-2s (mlx4_0 InfiniBand, ports 1 and 2;
// mlx4_1 RoCE, ports 1 and 2; mlx5_0 InfiniBand) with GID tables on the
// RoCE ports and P_Key tables on the InfiniBand ones, and reads it back.
func commsMachine(t testing.TB) *topology.Machine {
	t.Helper()
	root := t.TempDir()
	if _, err := fakesys.Write(root, "dualport-2s", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	v2 := []string{"IB/RoCE v1", "IB/RoCE v1", "IB/RoCE v1", "RoCE v2", "RoCE v2", "RoCE v2"}
	writes := []error{
		// Port 1: 10.56.0.5 at 1 (v1) and 3 (v2), fd00:56::5 at 4 (v2), 10.57.0.6 at 5.
		fakesys.WriteGIDs(root, "mlx4_1", 1, []string{gidLinkLocal, gidV4Pod5, gidLinkLocal, gidV4Pod5, gidV6Pod5, gidV4Other}, v2),
		// Port 2: 10.56.0.6 at 3 (v2), 10.56.0.5 at 4 (v2: disagrees with port 1), fd00:57::6 at 5.
		fakesys.WriteGIDs(root, "mlx4_1", 2, []string{gidLinkLocal, gidV4Pod6, gidLinkLocal, gidV4Pod6, gidV4Pod5, gidV6Other}, v2),
		fakesys.WritePKeys(root, "mlx5_0", 1, []string{"0xffff", "0x0001", "0x8001", "0x8002"}),
		fakesys.WritePKeys(root, "mlx4_0", 2, []string{"0xffff", "0x8001"}),
	}
	for _, err := range writes {
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// lease is a lease of sandbox s1 on nics; rail0, rail1, ... in order.
type lease struct {
	mode    string
	addr    string
	nics    []string
	pkey    uint16
	primary string
}

func putLeases(st *fakeState, leases []lease) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, l := range leases {
		st.leases["s1"] = append(st.leases["s1"], ipam.Lease{Sandbox: "s1", IfName: "rail" + string(rune('0'+i)), Pool: "p",
			Address: netip.MustParsePrefix(l.addr), NICs: l.nics, Mode: l.mode, PKey: l.pkey, PrimaryIf: l.primary})
	}
}

// startPod is a plugin with opt whose sandbox s1 holds leases and has
// started (RunPodSandbox).
func startPod(t *testing.T, opt Options, leases []lease) (*Plugin, *nriapi.PodSandbox) {
	t.Helper()
	st := newFakeState()
	putLeases(st, leases)
	opt.State = st
	p, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	sandbox := pod("s1", "default", nil)
	if err := p.RunPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	return p, sandbox
}

// TestCommsEnv: every variable the plugin sets, in every mode, from the
// leases and the node's port tables, never over what the container sets.
func TestCommsEnv(t *testing.T) {
	const topo = "/etc/rail-topology/topology.xml"
	tests := []struct {
		name     string
		cfg      Config
		topoFile string // raild's topologyFile
		leases   []lease
		ctr      *nriapi.Container
		want     map[string]string
		mount    string // the topology file's source, "" for no mount
	}{{
		name:   "move, RoCE, IPv4: the GID of the pod's address (RoCE v2), its subnet, eth0 by default",
		leases: []lease{{mode: "move", addr: "10.56.0.5/24", nics: []string{"mlx4_1"}}},
		want: map[string]string{envNCCLHCA: "=mlx4_1:1", envUCXDevices: "mlx4_1:1", envMCFilters: "mlx4_1", envNCCLGIDIndex: "3", envUCXGIDIndex: "3", envMCGIDIndex: "3",
			envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "macvlan, RoCE: the same, and the primary the plugin named",
		leases: []lease{{mode: "macvlan", addr: "10.56.0.5/24", nics: []string{"mlx4_1"}, primary: "net0"}},
		want: map[string]string{envNCCLHCA: "=mlx4_1:1", envUCXDevices: "mlx4_1:1", envMCFilters: "mlx4_1", envNCCLGIDIndex: "3", envUCXGIDIndex: "3", envMCGIDIndex: "3",
			envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=net0"},
	}, {
		name:   "a mode without a case of its own (vf): what the link layer needs",
		leases: []lease{{mode: "vf", addr: "10.56.0.6/24", nics: []string{"mlx4_1:2"}, primary: "eth0"}},
		want: map[string]string{envNCCLHCA: "=mlx4_1:2", envUCXDevices: "mlx4_1:2", envMCFilters: "mlx4_1", envNCCLGIDIndex: "3", envUCXGIDIndex: "3", envMCGIDIndex: "3",
			envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "move, RoCE, IPv6 pool: AF_INET6 and the v6 subnet",
		leases: []lease{{mode: "move", addr: "fd00:56::5/64", nics: []string{"mlx4_1"}}},
		want: map[string]string{envNCCLHCA: "=mlx4_1:1", envUCXDevices: "mlx4_1:1", envMCFilters: "mlx4_1", envNCCLGIDIndex: "4", envUCXGIDIndex: "4", envMCGIDIndex: "4",
			envNCCLAddrFamily: "AF_INET6", envNCCLAddrRange: "fd00:56::/64", envNCCLSocketIf: "=eth0"},
	}, {
		name: "two RoCE ports, same index, one pool: one index, one range",
		leases: []lease{{mode: "move", addr: "10.56.0.5/24", nics: []string{"mlx4_1"}},
			{mode: "move", addr: "10.56.0.6/24", nics: []string{"mlx4_1:2"}}},
		want: map[string]string{envNCCLHCA: "=mlx4_1:1,mlx4_1:2", envUCXDevices: "mlx4_1:1,mlx4_1:2", envMCFilters: "mlx4_1", envNCCLGIDIndex: "3", envUCXGIDIndex: "3", envMCGIDIndex: "3",
			envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "two RoCE ports disagree on the index: none; the range lets NCCL pick per port",
		leases: []lease{{mode: "macvlan", addr: "10.56.0.5/24", nics: []string{"mlx4_1", "mlx4_1:2"}}},
		want: map[string]string{envNCCLHCA: "=mlx4_1:1,mlx4_1:2", envUCXDevices: "mlx4_1:1,mlx4_1:2", envMCFilters: "mlx4_1",
			envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0"},
	}, {
		name: "two RoCE subnets: no single range",
		leases: []lease{{mode: "move", addr: "10.56.0.5/24", nics: []string{"mlx4_1"}},
			{mode: "move", addr: "10.57.0.6/24", nics: []string{"mlx4_1:2"}}},
		want: map[string]string{envNCCLHCA: "=mlx4_1:1,mlx4_1:2", envUCXDevices: "mlx4_1:1,mlx4_1:2", envMCFilters: "mlx4_1", envNCCLSocketIf: "=eth0"},
	}, {
		name: "two IPv6 subnets at different indices: the family alone",
		leases: []lease{{mode: "move", addr: "fd00:56::5/64", nics: []string{"mlx4_1"}},
			{mode: "move", addr: "fd00:57::6/64", nics: []string{"mlx4_1:2"}}},
		want: map[string]string{envNCCLHCA: "=mlx4_1:1,mlx4_1:2", envUCXDevices: "mlx4_1:1,mlx4_1:2", envMCFilters: "mlx4_1",
			envNCCLAddrFamily: "AF_INET6", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "address not in the GID table (exclusive mode hides the device): no index, the range still",
		leases: []lease{{mode: "move", addr: "10.56.0.9/24", nics: []string{"mlx4_1"}}},
		want: map[string]string{envNCCLHCA: "=mlx4_1:1", envUCXDevices: "mlx4_1:1", envMCFilters: "mlx4_1",
			envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "ipoib child with a P_Key: its index, full membership preferred; no GID, no range",
		leases: []lease{{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}, pkey: 0x8001, primary: "eth0"}},
		want:   map[string]string{envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0", envNCCLPKey: "2", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "ipoib, P_Key given without the membership bit",
		leases: []lease{{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}, pkey: 0x0002}},
		want:   map[string]string{envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0", envNCCLPKey: "3", envNCCLSocketIf: "=eth0"},
	}, {
		name: "ipoib on two ports at different P_Key indices: none",
		leases: []lease{{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}, pkey: 0x8001},
			{mode: "ipoib", addr: "10.60.0.6/24", nics: []string{"mlx4_0:2"}, pkey: 0x8001}},
		want: map[string]string{envNCCLHCA: "=mlx5_0,mlx4_0:2", envUCXDevices: "mlx5_0:1,mlx4_0:2", envMCFilters: "mlx5_0,mlx4_0", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "ipoib on the parent's P_Key: nothing to say",
		leases: []lease{{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}}},
		want:   map[string]string{envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "ipoib, P_Key not in the port's table: none",
		leases: []lease{{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}, pkey: 0x8009}},
		want:   map[string]string{envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "what the container sets itself is left alone; the family goes with the range",
		leases: []lease{{mode: "move", addr: "fd00:56::5/64", nics: []string{"mlx4_1"}}},
		ctr: ctr("app", "NCCL_IB_GID_INDEX=7", "NCCL_SOCKET_IFNAME=^lo", "NCCL_IB_ADDR_FAMILY=AF_INET",
			"NCCL_TOPO_FILE=/opt/mine.xml", "NCCL_IB_HCA=mlx4_1", "UCX_NET_DEVICES=all"),
		topoFile: topo,
		want:     map[string]string{},
	}, {
		name:   "the container sets the range alone: no family either",
		leases: []lease{{mode: "move", addr: "fd00:56::5/64", nics: []string{"mlx4_1"}}},
		ctr:    ctr("app", "NCCL_IB_ADDR_RANGE=fd00::/16", "NCCL_IB_PKEY=1"),
		want: map[string]string{envNCCLHCA: "=mlx4_1:1", envUCXDevices: "mlx4_1:1", envMCFilters: "mlx4_1", envNCCLGIDIndex: "4", envUCXGIDIndex: "4", envMCGIDIndex: "4",
			envNCCLSocketIf: "=eth0"},
	}, {
		name:   "the container sets an engine's variable: that one is left alone, the others follow NCCL's",
		leases: []lease{{mode: "move", addr: "fd00:56::5/64", nics: []string{"mlx4_1"}}},
		ctr:    ctr("app", "MC_GID_INDEX=0", "MC_MS_FILTERS=mlx5_0", "UCX_TLS=tcp"),
		want: map[string]string{envNCCLHCA: "=mlx4_1:1", envUCXDevices: "mlx4_1:1", envNCCLGIDIndex: "4", envUCXGIDIndex: "4",
			envNCCLAddrFamily: "AF_INET6", envNCCLAddrRange: "fd00:56::/64", envNCCLSocketIf: "=eth0"},
	}, {
		name:   "the container sets UCX's GID index alone: NCCL's and Mooncake's still come",
		leases: []lease{{mode: "move", addr: "fd00:56::5/64", nics: []string{"mlx4_1"}}},
		ctr:    ctr("app", "UCX_IB_GID_INDEX=9"),
		want: map[string]string{envNCCLHCA: "=mlx4_1:1", envUCXDevices: "mlx4_1:1", envMCFilters: "mlx4_1", envNCCLGIDIndex: "4",
			envMCGIDIndex: "4", envNCCLAddrFamily: "AF_INET6", envNCCLAddrRange: "fd00:56::/64", envNCCLSocketIf: "=eth0"},
	}, {
		name:     "topology file: mounted read-only, NCCL_TOPO_FILE names it",
		topoFile: topo,
		leases:   []lease{{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}}},
		want: map[string]string{envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0", envNCCLSocketIf: "=eth0",
			envNCCLTopoFile: topoFileInContainer},
		mount: topo,
	}, {
		name:     "topology file seen elsewhere by raild: the host's path is mounted",
		cfg:      Config{TopologyFileOnHost: "/opt/microsoft/ndv5-topo.xml"},
		topoFile: topo,
		leases:   []lease{{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}}},
		want: map[string]string{envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0", envNCCLSocketIf: "=eth0",
			envNCCLTopoFile: topoFileInContainer},
		mount: "/opt/microsoft/ndv5-topo.xml",
	}, {
		name:     "the container already mounts something there: neither mount nor variable",
		topoFile: topo,
		leases:   []lease{{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}}},
		ctr:      &nriapi.Container{Name: "app", Mounts: []*nriapi.Mount{{Destination: topoFileInContainer, Source: "/x", Type: "bind"}}},
		want:     map[string]string{envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0", envNCCLSocketIf: "=eth0"},
	}, {
		name:     "ncclEnv off: no variable, no mount",
		cfg:      Config{NCCLEnv: boolPtr(false)},
		topoFile: topo,
		leases:   []lease{{mode: "macvlan", addr: "10.56.0.5/24", nics: []string{"mlx4_1"}, primary: "net0"}},
		want:     map[string]string{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, sandbox := startPod(t, Options{Config: tt.cfg, Machine: fixed(commsMachine(t)), TopologyFile: tt.topoFile}, tt.leases)
			c := tt.ctr
			if c == nil {
				c = ctr("app")
			}
			adj, _, err := p.CreateContainer(t.Context(), sandbox, c)
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(adj).Env; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("env = %v\nwant  %v", got, tt.want)
			}
			var mounts []string
			for _, m := range adj.GetMounts() {
				mounts = append(mounts, m.Source+" "+m.Destination+" "+m.Type+" "+joinOpts(m.Options))
			}
			var want []string
			if tt.mount != "" {
				want = []string{tt.mount + " " + topoFileInContainer + " bind bind,ro,nosuid,nodev,noexec"}
			}
			if !reflect.DeepEqual(mounts, want) {
				t.Errorf("mounts = %q, want %q", mounts, want)
			}
		})
	}
}

func joinOpts(opts []string) string {
	out := ""
	for i, o := range opts {
		if i > 0 {
			out += ","
		}
		out += o
	}
	return out
}

// TestCommsEnvNoLease: a container gpuAutoInject serves (no lease, so no
// rail interface) gets the NICs and the topology file, nothing that
// names pod interfaces or addresses.
func TestCommsEnvNoLease(t *testing.T) {
	p, err := New(Options{Config: Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}},
		Machine: fixed(commsMachine(t)), State: newFakeState(), TopologyFile: "/etc/topo.xml"})
	if err != nil {
		t.Fatal(err)
	}
	adj, _, err := p.CreateContainer(t.Context(), pod("s1", "default", nil), withCDI(ctr("app"), "nvidia.com/gpu=4"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{envNCCLHCA: "=mlx5_0", envUCXDevices: "mlx5_0:1", envMCFilters: "mlx5_0", envNCCLTopoFile: topoFileInContainer}
	if got := summarize(adj).Env; !reflect.DeepEqual(got, want) {
		t.Fatalf("env = %v, want %v", got, want)
	}
}

// TestPodEnvFilledOffHotPath: RunPodSandbox works out the pod's env; after
// that CreateContainer reads no sysfs (the tables are deleted to prove
// it), and RemovePodSandbox forgets the pod.
func TestPodEnvFilledOffHotPath(t *testing.T) {
	m := commsMachine(t)
	p, sandbox := startPod(t, Options{Machine: fixed(m)}, []lease{{mode: "move", addr: "10.56.0.5/24", nics: []string{"mlx4_1"}},
		{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}, pkey: 0x8001}})
	if err := removeAll(m.Root); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app", "sidecar"} {
		adj, _, err := p.CreateContainer(t.Context(), sandbox, ctr(name))
		if err != nil {
			t.Fatal(err)
		}
		env := summarize(adj).Env
		if env[envNCCLGIDIndex] != "3" || env[envNCCLPKey] != "2" {
			t.Fatalf("%s: env %v from the cache, want GID index 3 and P_Key index 2", name, env)
		}
	}
	if err := p.RemovePodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	if p.pods.get("s1") != nil {
		t.Fatal("RemovePodSandbox left the pod's env")
	}
}

// TestPodEnvLateGID: a GID the kernel had not published at RunPodSandbox
// is looked up once more by the first CreateContainer, and that answer
// (found or not) is kept for the pod's other containers.
func TestPodEnvLateGID(t *testing.T) {
	m := commsMachine(t)
	p, sandbox := startPod(t, Options{Machine: fixed(m)}, []lease{{mode: "macvlan", addr: "10.56.0.7/24", nics: []string{"mlx4_1"}}})
	if pe := recordedEnv(p, "s1"); pe == nil || !pe.retry || pe.gidIndex != "" {
		t.Fatalf("env after RunPodSandbox = %+v, want a retry without an index", pe)
	}
	if err := fakesys.WriteGIDs(m.Root, "mlx4_1", 1, []string{gidLinkLocal, "0000:0000:0000:0000:0000:ffff:0a38:0007"},
		[]string{"IB/RoCE v1", "RoCE v2"}); err != nil {
		t.Fatal(err)
	}
	adj, _, _ := p.CreateContainer(t.Context(), sandbox, ctr("app"))
	if got := summarize(adj).Env[envNCCLGIDIndex]; got != "1" {
		t.Fatalf("%s = %q after the GID appeared, want 1", envNCCLGIDIndex, got)
	}
	if err := removeAll(m.Root); err != nil {
		t.Fatal(err)
	}
	adj, _, _ = p.CreateContainer(t.Context(), sandbox, ctr("sidecar"))
	if got := summarize(adj).Env[envNCCLGIDIndex]; got != "1" {
		t.Fatalf("second container: %s = %q, want the kept 1", envNCCLGIDIndex, got)
	}
}

// TestSynchronizeRebuildsPodEnv: after a (re)connection the cache holds
// the running pods' env, and nothing of pods that are gone.
func TestSynchronizeRebuildsPodEnv(t *testing.T) {
	st := newFakeState()
	st.add("live", api.ModeMacvlan, "10.56.0.6/24", "mlx4_1:2")
	p, err := New(Options{Machine: fixed(commsMachine(t)), State: st})
	if err != nil {
		t.Fatal(err)
	}
	p.pods.put("gone", &podRecord{env: &podEnv{gidIndex: "5"}})
	if _, err := p.Synchronize(t.Context(), []*nriapi.PodSandbox{pod("live", "default", nil)}, nil); err != nil {
		t.Fatal(err)
	}
	if pe := recordedEnv(p, "live"); pe == nil || pe.gidIndex != "3" {
		t.Fatalf("live pod's env = %+v; want GID index 3", pe)
	}
	if p.pods.get("gone") != nil {
		t.Fatal("Synchronize kept a gone pod's env")
	}
}

// recordedEnv is the env in a sandbox's record (nil: no record or no env).
func recordedEnv(p *Plugin, sandbox string) *podEnv {
	if rec := p.pods.get(sandbox); rec != nil {
		return rec.env
	}
	return nil
}
