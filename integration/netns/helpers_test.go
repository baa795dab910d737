package netns

import (
	"context"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/topology"
)

// settle bounds the wait for the kernel's asynchronous work (IPv6
// link-local addresses, carrier) before two snapshots must agree.
const settle = 3 * time.Second

// ptpSubnet is eth0's subnet (the primary plugin's host-local range).
const ptpSubnet = "10.88.0.0/24"

// newNode builds a simulated node and removes it when the test ends.
func newNode(t testing.TB, opt harness.NodeOptions) *harness.Node {
	t.Helper()
	netnstest.RequireRoot(t, "creates network namespaces, veth and macvlan links")
	opt.Bins = bins
	node, err := harness.NewNode(opt)
	if err != nil {
		t.Fatalf("new node %s: %v", opt.Machine, err)
	}
	t.Cleanup(func() {
		if t.Failed() && node.Raild != nil {
			t.Logf("raild log (last lines):\n%s", node.Raild.LogTail(40))
		}
		if err := node.Close(); err != nil {
			t.Errorf("close node: %v", err)
		}
	})
	return node
}

func newPod(t testing.TB, node *harness.Node, name string, annotations map[string]string) *harness.Pod {
	t.Helper()
	pod, err := node.NewPod("default", name, annotations)
	if err != nil {
		t.Fatalf("new pod %s: %v", name, err)
	}
	return pod
}

func snapshot(t testing.TB, node *harness.Node) harness.Snapshot {
	t.Helper()
	s, err := node.Snapshot()
	if err != nil {
		t.Fatalf("snapshot node netns: %v", err)
	}
	return s
}

// chain is the conflist a runtime would use: ptp for eth0, then rail.
func chain(t testing.TB, node *harness.Node, version string, rail map[string]any) *harness.Network {
	t.Helper()
	n, err := node.Network("railnet", version, node.PTP(ptpSubnet), node.RailPlugin(rail))
	if err != nil {
		t.Fatalf("conflist: %v", err)
	}
	return n
}

func add(t testing.TB, n *harness.Network, pod *harness.Pod) *current.Result {
	t.Helper()
	raw, err := n.Add(context.Background(), pod)
	if err != nil {
		t.Fatalf("ADD %s: %v", pod.Name, err)
	}
	res, err := harness.ToCurrent(raw)
	if err != nil {
		t.Fatalf("ADD %s: %v", pod.Name, err)
	}
	return res
}

func leases(t testing.TB, node *harness.Node) []api.Lease {
	t.Helper()
	l, err := node.Raild.Leases()
	if err != nil {
		t.Fatalf("raild leases: %v", err)
	}
	return l
}

// requireClean fails unless the node netns equals before, every stand-in
// NIC is home under its own name, MTU and state, and raild holds no lease.
func requireClean(t testing.TB, node *harness.Node, before harness.Snapshot) {
	t.Helper()
	diff, err := harness.WaitSame(node.Netns, before, settle)
	if err != nil {
		t.Fatalf("snapshot node netns: %v", err)
	}
	if len(diff) > 0 {
		t.Errorf("node netns changed:\n%s", strings.Join(diff, "\n"))
	}
	if problems := node.Fabric.Present(); len(problems) > 0 {
		t.Errorf("stand-in NICs not restored:\n%s", strings.Join(problems, "\n"))
	}
	if node.Raild.Running() {
		if l := leases(t, node); len(l) > 0 {
			t.Errorf("raild still holds %d lease(s): %+v", len(l), l)
		}
	}
}

// closestNICs is what `raild topo` says a pod with these GPUs should get:
// per GPU the closest ACTIVE NIC of the link layer (any when ""), ties by
// name; each NIC once, sorted.
func closestNICs(t testing.TB, node *harness.Node, gpus []int, linkLayer string) []string {
	t.Helper()
	report, err := node.Raild.Topology()
	if err != nil {
		t.Fatalf("raild topo: %v", err)
	}
	var out []string
	for _, g := range gpus {
		nic, ok := closestNIC(report, g, linkLayer)
		if !ok {
			t.Fatalf("raild topo: no %s NIC for GPU %d", linkLayer, g)
		}
		if !slices.Contains(out, nic) {
			out = append(out, nic)
		}
	}
	sort.Strings(out)
	return out
}

func closestNIC(report topology.Report, gpu int, linkLayer string) (string, bool) {
	row := report.Matrix[strconv.Itoa(gpu)]
	best, found := "", false
	var bestClass topology.Class
	for _, nic := range report.NICs {
		if nic.State != "ACTIVE" || (linkLayer != "" && string(nic.LinkLayer) != linkLayer) {
			continue
		}
		class, ok := row[nic.Name]
		if !ok {
			continue
		}
		if !found || class < bestClass || (class == bestClass && nic.Name < best) {
			best, bestClass, found = nic.Name, class, true
		}
	}
	return best, found
}

// podInterface finds an interface by name in a CNI result.
func podInterface(res *current.Result, name string) (int, *current.Interface) {
	for i, iface := range res.Interfaces {
		if iface.Name == name {
			return i, iface
		}
	}
	return -1, nil
}

// ipsOf lists the result's addresses that point at interface index i.
func ipsOf(res *current.Result, i int) []string {
	var out []string
	for _, ip := range res.IPs {
		if ip.Interface != nil && *ip.Interface == i {
			out = append(out, ip.Address.String())
		}
	}
	return out
}

// leaseIP is the address of a lease without its prefix length.
func leaseIP(t testing.TB, l api.Lease) net.IP {
	t.Helper()
	ip, _, err := net.ParseCIDR(l.Address)
	if err != nil {
		t.Fatalf("lease address %q: %v", l.Address, err)
	}
	return ip
}
