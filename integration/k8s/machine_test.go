package k8s

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// fakeMachine is the simulated GPU node raild reads: 8 H100 and 4 ConnectX-7.
const fakeMachine = "h100x8-cx7x4"

// fakeGPUUUID is the device ID the fake device plugin reports for GPU i
// (integration/cmd/fake-gpu-plugin).
func fakeGPUUUID(i int) string { return fmt.Sprintf("GPU-00000000-0000-0000-0000-%012x", i) }

// machine is the fake node: its root folder, one veth per NIC in the host
// namespace standing in for the NIC's netdev, and the peers on a bridge
// in a namespace of their own (the fabric), so pods reach each other over
// their rail interfaces.
type machine struct {
	root    string
	spec    *fakesys.Spec
	topo    *topology.Machine
	netdevs map[string]string // RDMA device -> stand-in netdev in the host
	fabric  string            // netns name
}

// newMachine writes the machine below dir and creates the stand-ins;
// removal is registered on t.
func newMachine(t *testing.T, dir string) *machine {
	t.Helper()
	host, _ := fakesys.Machine(fakeMachine)
	return newMachineOf(t, dir, fakeMachine, host)
}

// newMachineOf is newMachine for a described host with 8 GPUs and the 4
// NICs mlx5_0..mlx5_3; name seeds its GUIDs.
func newMachineOf(t *testing.T, dir, name string, host fakesys.Host) *machine {
	t.Helper()
	m := &machine{root: filepath.Join(dir, "machine"), netdevs: map[string]string{}, fabric: "rk-fabric"}
	uuids := make([]string, 8)
	for i := range uuids {
		uuids[i] = fakeGPUUUID(i)
	}
	for i := 0; i < 4; i++ {
		m.netdevs[fmt.Sprintf("mlx5_%d", i)] = fmt.Sprintf("rknic%d", i)
	}
	m.createStandIns(t)
	spec, err := fakesys.WriteHost(m.root, name, host, fakesys.Options{Netdevs: m.netdevs, DevNumbers: harness.HarmlessDevNumbers(), GPUUUIDs: uuids})
	if err != nil {
		t.Fatalf("fakesys.Write: %v", err)
	}
	m.spec = spec
	for i, g := range spec.GPUs {
		if g.UUID != uuids[i] {
			t.Fatalf("GPU %d has UUID %s, the fake device plugin says %s", i, g.UUID, uuids[i])
		}
	}
	if err := harness.MakeDevNodes(spec); err != nil {
		t.Fatal(err)
	}
	if m.topo, err = topology.Discover(m.root); err != nil {
		t.Fatalf("discover the fake machine: %v", err)
	}
	return m
}

func (m *machine) createStandIns(t *testing.T) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	host, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	_ = netns.DeleteNamed(m.fabric) // a crashed run's leftover
	fab, err := netnstest.NewNamed(m.fabric)
	if err != nil {
		t.Fatalf("create netns %s: %v", m.fabric, err)
	}
	defer fab.Close()
	t.Cleanup(func() { m.removeStandIns(t) })
	fh, err := netlink.NewHandleAt(fab)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := netns.Set(host); err != nil {
		t.Fatal(err)
	}
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "rkfab0"}}
	if err := fh.LinkAdd(br); err != nil {
		t.Fatalf("create bridge: %v", err)
	}
	if err := fh.LinkSetUp(br); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		name, peer := m.netdevs[fmt.Sprintf("mlx5_%d", i)], fmt.Sprintf("rkpeer%d", i)
		if l, err := netlink.LinkByName(name); err == nil { // a crashed run's leftover
			_ = netlink.LinkDel(l)
		}
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name, MTU: 4092}, PeerName: peer,
			PeerNamespace: netlink.NsFd(int(fab)), PeerMTU: 4092}
		if err := netlink.LinkAdd(veth); err != nil {
			t.Fatalf("create stand-in %s: %v", name, err)
		}
		if err := netlink.LinkSetUp(veth); err != nil {
			t.Fatal(err)
		}
		pl, err := fh.LinkByName(peer)
		if err != nil {
			t.Fatal(err)
		}
		if err := fh.LinkSetMaster(pl, br); err != nil {
			t.Fatal(err)
		}
		if err := fh.LinkSetUp(pl); err != nil {
			t.Fatal(err)
		}
	}
}

// removeStandIns deletes the stand-ins in the host — under their names, or
// under a pod's name when a failed run's pod netns went without CNI DEL
// (the alias rail:<host name>:… tells them) — and the fabric namespace.
func (m *machine) removeStandIns(t *testing.T) {
	links, err := netlink.LinkList()
	if err != nil {
		t.Errorf("list links: %v", err)
	}
	for _, l := range links {
		if m.isStandIn(l.Attrs().Name, l.Attrs().Alias) {
			if err := netlink.LinkDel(l); err != nil {
				t.Errorf("delete %s: %v", l.Attrs().Name, err)
			}
		}
	}
	if err := netns.DeleteNamed(m.fabric); err != nil {
		t.Errorf("delete netns %s: %v", m.fabric, err)
	}
}

// nicsFor returns the NICs closest to these GPUs (by UUID), sorted: what a
// pod holding them must get.
func (m *machine) nicsFor(t *testing.T, uuids []string) []string {
	t.Helper()
	var idx []int
	for _, u := range uuids {
		i := slices.IndexFunc(m.spec.GPUs, func(g fakesys.GPUSpec) bool { return g.UUID == u })
		if i < 0 {
			t.Fatalf("GPU %s is not on the fake machine", u)
		}
		idx = append(idx, i)
	}
	choices, err := m.topo.Select(topology.Request{GPUs: idx})
	if err != nil {
		t.Fatalf("select NICs for GPUs %v: %v", idx, err)
	}
	var nics []string
	for _, c := range choices {
		nics = append(nics, c.NIC)
	}
	sort.Strings(nics)
	return slices.Compact(nics)
}

// uverbs returns the uverbs node name of a NIC.
func (m *machine) uverbs(t *testing.T, nic string) string {
	t.Helper()
	n, ok := m.spec.NIC(nic)
	if !ok {
		t.Fatalf("no NIC %s", nic)
	}
	return n.Uverbs.Name
}

func (m *machine) isStandIn(name, alias string) bool {
	for _, own := range m.netdevs {
		if name == own || strings.HasPrefix(alias, "rail:"+own+":") {
			return true
		}
	}
	return false
}

// standInsAway lists the stand-ins not in the host namespace under their names.
func (m *machine) standInsAway() []string {
	var away []string
	for nic, name := range m.netdevs {
		if _, err := netlink.LinkByName(name); err != nil {
			away = append(away, nic+"("+name+")")
		}
	}
	sort.Strings(away)
	return away
}
