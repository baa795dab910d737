package nri

import (
	"cmp"
	"net/netip"
	"os"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology"
)

// recordCase is one pod whose containers' answer depends on what sysfs
// says (GID and P_Key indices, the pod's own rxe): options for a plugin
// (made afresh for each plugin), its leases, its namespace and the
// container the hook is asked about.
type recordCase struct {
	name   string
	opt    func() Options
	leases []lease
	ns     string
	ctr    string
	// replace is the machine the inventory publishes after the pod
	// started (nil: none): the hook resolves the devices in it again.
	replace func(*topology.Machine) *topology.Machine
}

// withNewUverbs is m with mlx4_1's uverbs renumbered, as a NIC the
// inventory saw leave and come back.
func withNewUverbs(m *topology.Machine) *topology.Machine {
	next := *m
	next.NICs = slices.Clone(m.NICs)
	for i := range next.NICs {
		if next.NICs[i].Name == "mlx4_1" {
			u := *next.NICs[i].Uverbs
			u.Minor += 40
			next.NICs[i].Uverbs = &u
		}
	}
	return &next
}

func recordCases(t *testing.T) []recordCase {
	comms := commsMachine(t)
	soft, _ := softRoCENode(t)
	draRoot := t.TempDir()
	writeGIDs(t, draRoot, "mlx5_1", []string{gidLinkLocal, gidV4Pod5}, nil)
	dra := testMachine(draRoot)
	_, kubelet := podinfotest.Kubelet(t, []podinfotest.Pod{{Namespace: "ml", Name: "p-s1", Containers: []podinfotest.Container{
		{Name: "trainer", Claims: []podinfotest.Claim{nicClaim("rdma", "pci-0000-31-00-0")}}}}})
	nics := nicSlices{"pci-0000-31-00-0": {RDMADevice: "mlx5_1", IfName: "eth1", PCI: "0000:31:00.0",
		Addrs: []netip.Addr{netip.MustParseAddr("10.56.0.5")}}}
	return []recordCase{{
		name:   "move, RoCE, IPv4: the GID index",
		opt:    func() Options { return Options{Machine: fixed(comms)} },
		leases: []lease{{mode: "move", addr: "10.56.0.5/24", nics: []string{"mlx4_1"}}},
	}, {
		name: "RoCE IPv6 and IPoIB with a P_Key, topology file: both indices",
		opt:  func() Options { return Options{Machine: fixed(comms), TopologyFile: "/etc/topo.xml"} },
		leases: []lease{{mode: "macvlan", addr: "fd00:56::5/64", nics: []string{"mlx4_1"}, primary: "net0"},
			{mode: "ipoib", addr: "10.60.0.5/24", nics: []string{"mlx5_0"}, pkey: 0x8001}},
	}, {
		name:    "the inventory replaced the machine after the pod started: its new devices, the env kept",
		opt:     func() Options { return Options{Machine: fixed(comms)} },
		leases:  []lease{{mode: "move", addr: "10.56.0.5/24", nics: []string{"mlx4_1"}}},
		replace: withNewUverbs,
	}, {
		name:   "softRoCE: the pod's own rxe and its GID index",
		opt:    func() Options { return Options{Machine: fixed(soft), SoftRoCE: true} },
		leases: []lease{{mode: "macvlan", addr: "10.56.0.5/24", nics: []string{"rxe0"}}},
	}, {
		name: "a DRA NIC of the container's claim: its GID index",
		opt: func() Options {
			src := &podinfo.GPUSource{Kubelet: kubelet, NICDrivers: []string{podinfo.DefaultDRANICDriver}, NICs: nics, Machine: fixed(dra)}
			return Options{Machine: fixed(dra), GPUs: src, DRAHeld: podinfo.NewDRAHeld()}
		},
		ns: "ml", ctr: "trainer",
	}}
}

// answer is what the hook gives the case's container: the adjustment's
// devices, rlimits, env and mounts. before and after (nil: nothing) run
// before RunPodSandbox and after it (once the kubelet answered and the
// inventory published the case's new machine); live is the machine the
// plugin reads.
func (c recordCase) answer(t *testing.T, live *atomic.Pointer[topology.Machine], before, after func()) string {
	t.Helper()
	st := newFakeState()
	putLeases(st, c.leases)
	opt := c.opt()
	opt.State = st
	opt.Machine = live.Load
	p, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	sandbox := pod("s1", cmp.Or(c.ns, "default"), nil)
	run(before)
	if err := p.RunPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	if p.kubelet != nil {
		<-p.kubelet.start(sandbox).done
	}
	if c.replace != nil {
		live.Store(c.replace(live.Load()))
	}
	run(after)
	adj, _, err := p.CreateContainer(t.Context(), sandbox, ctr(cmp.Or(c.ctr, "app")))
	if err != nil {
		t.Fatal(err)
	}
	out := summarize(adj).String()
	for _, m := range adj.GetMounts() {
		out += " mount=" + m.Source + ":" + m.Destination
	}
	return out
}

func run(f func()) {
	if f != nil {
		f()
	}
}

// hideRoot moves a machine's root away (every sysfs read fails) until
// the returned function puts it back.
func hideRoot(t *testing.T, root string) (hide, restore func()) {
	t.Helper()
	away := root + ".away"
	hidden := false
	restore = func() {
		if !hidden {
			return
		}
		hidden = false
		if err := os.Remove(root); err != nil {
			t.Error(err)
		}
		if err := os.Rename(away, root); err != nil {
			t.Error(err)
		}
	}
	hide = func() {
		if err := os.Rename(root, away); err != nil {
			t.Fatal(err)
		}
		hidden = true
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(restore)
	return hide, restore
}

// TestCreateContainerReadsNoSysfs: once a pod started, CreateContainer
// answers from the pod's record alone: with the node's root moved away
// after RunPodSandbox (every sysfs and port table read fails) it gives
// what a plugin that reads sysfs throughout gives, while a plugin that
// starts the pod with the root already away gives less (what the answer
// owes to sysfs).
func TestCreateContainerReadsNoSysfs(t *testing.T) {
	for _, c := range recordCases(t) {
		t.Run(c.name, func(t *testing.T) {
			start := c.opt().Machine()
			var live atomic.Pointer[topology.Machine]
			hide, restore := hideRoot(t, start.Root)

			live.Store(start)
			want := c.answer(t, &live, nil, nil)

			live.Store(start)
			got := c.answer(t, &live, nil, hide)
			restore()

			live.Store(start)
			blind := c.answer(t, &live, hide, nil)
			restore()

			if got != want {
				t.Errorf("root away after RunPodSandbox:\n got  %s\n want %s", got, want)
			}
			if blind == want {
				t.Errorf("root away before RunPodSandbox gives the same %s: the case owes nothing to sysfs", want)
			}
		})
	}
}

// TestPodRecordFollowsItsInputs: the hook builds a pod's record again
// when its leases changed since, reads the node's tables again when the
// inventory replaced them, and otherwise reads the one it has.
func TestPodRecordFollowsItsInputs(t *testing.T) {
	m := commsMachine(t)
	var live atomic.Pointer[topology.Machine]
	live.Store(m)
	st := newFakeState()
	putLeases(st, []lease{{mode: "move", addr: "10.56.0.5/24", nics: []string{"mlx4_1"}}})
	p, err := New(Options{Machine: live.Load, State: st})
	if err != nil {
		t.Fatal(err)
	}
	sandbox := pod("s1", "default", nil)
	if err := p.RunPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	first := p.pods.get("s1")
	nic, _ := m.NICByName("mlx4_1")
	u := nic.Uverbs
	before, after := dev(u.Name, int(u.Major), int(u.Minor)), dev(u.Name, int(u.Major), int(u.Minor)+40)
	steps := []struct {
		name    string
		change  func()
		rebuilt bool   // a new record
		hca     string // NCCL_IB_HCA
		uverbs  string // the first device
	}{{
		name: "nothing changed: the record of RunPodSandbox", hca: "=mlx4_1:1", uverbs: before,
	}, {
		name:    "the machine replaced: NICs resolved again",
		change:  func() { live.Store(withNewUverbs(m)) },
		rebuilt: true, hca: "=mlx4_1:1", uverbs: after,
	}, {
		name: "a second attachment's lease: built again",
		change: func() {
			st.mu.Lock()
			defer st.mu.Unlock()
			st.leases["s1"] = append(st.leases["s1"], ipam.Lease{Sandbox: "s1", IfName: "rail1", Pool: "p",
				Address: netip.MustParsePrefix("10.56.0.6/24"), NICs: []string{"mlx4_1:2"}, Mode: "move"})
		},
		rebuilt: true, hca: "=mlx4_1:1,mlx4_1:2", uverbs: after,
	}}
	prev := first
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		adj, _, err := p.CreateContainer(t.Context(), sandbox, ctr("app"))
		if err != nil {
			t.Fatal(err)
		}
		got := summarize(adj)
		rec := p.pods.get("s1")
		if (rec != prev) != s.rebuilt {
			t.Errorf("%s: record replaced = %v, want %v", s.name, rec != prev, s.rebuilt)
		}
		if got.Env[envNCCLHCA] != s.hca || len(got.Devices) == 0 || got.Devices[0] != s.uverbs {
			t.Errorf("%s: %v; want %s=%s and %s first", s.name, got, envNCCLHCA, s.hca, s.uverbs)
		}
		prev = rec
	}
	if err := p.StopPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	if p.pods.get("s1") != nil {
		t.Fatal("StopPodSandbox left the pod's record")
	}
	p.cancelAllReleases()
}

// TestSameLeases: a record is built again for any difference it is built
// from, and only for one.
func TestSameLeases(t *testing.T) {
	base := ipam.Lease{Sandbox: "s1", IfName: "rail0", Address: netip.MustParsePrefix("10.56.0.5/24"), NICs: []string{"mlx5_0"}, Mode: "move"}
	tests := []struct {
		name   string
		change func(*ipam.Lease)
		same   bool
	}{
		{"identical", func(*ipam.Lease) {}, true},
		{"another pool (not read)", func(l *ipam.Lease) { l.Pool = "q" }, true},
		{"interface", func(l *ipam.Lease) { l.IfName = "rail1" }, false},
		{"address", func(l *ipam.Lease) { l.Address = netip.MustParsePrefix("10.56.0.6/24") }, false},
		{"NICs", func(l *ipam.Lease) { l.NICs = []string{"mlx5_0", "mlx5_1"} }, false},
		{"mode", func(l *ipam.Lease) { l.Mode = "macvlan" }, false},
		{"P_Key", func(l *ipam.Lease) { l.PKey = 0x8001 }, false},
		{"primary", func(l *ipam.Lease) { l.PrimaryIf = "net0" }, false},
		{"made again", func(l *ipam.Lease) { l.Created = l.Created.Add(1) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := base
			other.NICs = slices.Clone(base.NICs)
			tt.change(&other)
			if got := sameLeases([]ipam.Lease{base}, []ipam.Lease{other}); got != tt.same {
				t.Errorf("sameLeases = %v, want %v", got, tt.same)
			}
		})
	}
	if sameLeases([]ipam.Lease{base}, []ipam.Lease{base, base}) {
		t.Error("a second lease is the same leases")
	}
}

// TestSoftRoCELateRecord: a pod whose rxe was not readable when it
// started gets, once the rxe is there, a record built again with it: its
// devices and the GID index read from its table; the record then holds,
// and is read without sysfs.
func TestSoftRoCELateRecord(t *testing.T) {
	m, podRxe := softRoCENode(t)
	hidden := m.Root + "/sys/class/infiniband/" + podRxe
	if err := os.Rename(hidden, hidden+".away"); err != nil {
		t.Fatal(err)
	}
	p, sandbox := startPod(t, Options{Machine: fixed(m), SoftRoCE: true}, []lease{{mode: "macvlan", addr: "10.56.0.5/24", nics: []string{"rxe0"}}})
	if rec := p.pods.get("s1"); rec == nil || !rec.softMissed {
		t.Fatalf("record after RunPodSandbox without the rxe: %+v, want one that reads it again", rec)
	}
	if err := os.Rename(hidden+".away", hidden); err != nil {
		t.Fatal(err)
	}
	hide, restore := hideRoot(t, m.Root)
	for i, name := range []string{"late", "later"} {
		if i == 1 {
			hide()
		}
		adj, _, err := p.CreateContainer(t.Context(), sandbox, ctr(name))
		if err != nil {
			t.Fatal(err)
		}
		if got := summarize(adj); got.Env[envNCCLHCA] != "="+podRxe || got.Env[envNCCLGIDIndex] != "1" || len(got.Devices) != 2 {
			t.Errorf("%s: %v; want its rxe's uverbs and rdma_cm, NCCL_IB_HCA==%s, GID index 1", name, got, podRxe)
		}
	}
	restore()
}
