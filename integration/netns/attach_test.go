package netns

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// attachCase is one mode on one machine, for a pod annotated with GPUs.
type attachCase struct {
	mode      api.Mode
	machine   string
	gpus      []int
	linkLayer string   // what the mode needs ("" for any)
	wantNICs  []string // what the topology says, written out
}

var attachCases = []attachCase{
	{mode: api.ModeMove, machine: "h100x8-cx7x4", gpus: []int{2, 3}, wantNICs: []string{"mlx5_1"}},
	// macvlan needs an Ethernet (RoCE) NIC: GPU 0's closest Ethernet NIC
	// is mlx5_4 (same NUMA node), not its InfiniBand mlx5_0.
	{mode: api.ModeMacvlan, machine: "gpu8-nic8", gpus: []int{0}, linkLayer: "Ethernet", wantNICs: []string{"mlx5_4"}},
}

// cniVersions are the spec versions of chains rail joins: flannel, Cilium,
// kindnet and older Calico write 0.3.1, AWS 0.4.0, containerd and newer
// Calico 1.0.0.
var cniVersions = []string{"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}

// hasCheck: CHECK came with spec 0.4.0.
func hasCheck(version string) bool { return version != "0.3.0" && version != "0.3.1" }

// hasMTU: interface MTU and PCI ID in results came with spec 1.0.0.
func hasMTU(version string) bool { return hasCheck(version) && version != "0.4.0" }

// TestAddCheckDel runs the chain ptp → rail through libcni for each mode
// and CNI version: the pod gets eth0 with its default route and rail0 with
// its lease, CHECK passes, and DEL leaves the node as it was.
func TestAddCheckDel(t *testing.T) {
	for _, tc := range attachCases {
		for _, version := range cniVersions {
			t.Run(string(tc.mode)+"/"+version, func(t *testing.T) {
				testAddCheckDel(t, tc, version)
			})
		}
	}
}

func testAddCheckDel(t *testing.T, tc attachCase, version string) {
	node := newNode(t, harness.NodeOptions{Machine: tc.machine})
	if got := closestNICs(t, node, tc.gpus, tc.linkLayer); !slices.Equal(got, tc.wantNICs) {
		t.Fatalf("raild topo says GPUs %v get %v, the test expects %v", tc.gpus, got, tc.wantNICs)
	}
	before := snapshot(t, node)
	pod := newPod(t, node, "p1", map[string]string{api.AnnotationGPUs: joinInts(tc.gpus)})
	network := chain(t, node, version, map[string]any{"mode": tc.mode})
	ctx := context.Background()

	raw, err := network.Add(ctx, pod)
	if err != nil {
		t.Fatalf("ADD: %v", err)
	}
	if raw.Version() != version {
		t.Errorf("ADD result version %s, want %s", raw.Version(), version)
	}
	res, err := harness.ToCurrent(raw)
	if err != nil {
		t.Fatal(err)
	}
	held := leases(t, node)
	if len(held) != 1 {
		t.Fatalf("raild leases: %d, want 1: %+v", len(held), held)
	}
	lease := held[0]
	if lease.Sandbox != pod.Sandbox || lease.IfName != "rail0" || !slices.Equal(lease.NICs, tc.wantNICs) {
		t.Errorf("lease %+v: want sandbox %s, ifname rail0, NICs %v", lease, pod.Sandbox, tc.wantNICs)
	}
	checkPodNetns(t, node, pod, tc, lease)
	checkResult(t, node, pod, res, version, tc, lease)

	// CHECK rail as CheckNetworkList runs it (upstream ptp's own CHECK
	// refuses any address of the result that is not on eth0).
	if hasCheck(version) {
		if err := network.CheckPlugin(ctx, pod, "rail"); err != nil {
			t.Errorf("CHECK: %v", err)
		}
	}
	if err := network.Del(ctx, pod); err != nil {
		t.Fatalf("DEL: %v", err)
	}
	if links, err := pod.Links(); err != nil {
		t.Error(err)
	} else if len(links) != 1 || links[0].Name != "lo" {
		t.Errorf("pod netns after DEL has %+v, want only lo", links)
	}
	requireClean(t, node, before)
}

// checkPodNetns: eth0 has the default route, rail0 the lease address and
// only its subnet's route, and rail0 is the planned NIC (itself or a child).
func checkPodNetns(t *testing.T, node *harness.Node, pod *harness.Pod, tc attachCase, lease api.Lease) {
	t.Helper()
	eth0, ok, err := pod.Link("eth0")
	if err != nil || !ok || len(eth0.Addrs) == 0 {
		t.Fatalf("pod eth0: %+v found=%v err=%v", eth0, ok, err)
	}
	rail0, ok, err := pod.Link("rail0")
	if err != nil || !ok {
		t.Fatalf("pod rail0: found=%v err=%v", ok, err)
	}
	if !rail0.Up || !slices.Equal(rail0.Addrs, []string{lease.Address}) {
		t.Errorf("rail0 up=%v addrs=%v, want up with %s", rail0.Up, rail0.Addrs, lease.Address)
	}
	nic, ok := node.Fabric.ByName(node.Machine.Netdevs[tc.wantNICs[0]])
	if !ok {
		t.Fatalf("no stand-in for %s", tc.wantNICs[0])
	}
	switch tc.mode {
	case api.ModeMove:
		if rail0.MAC != nic.MAC.String() || rail0.Type != "veth" {
			t.Errorf("rail0 is %s %s, want the stand-in of %s (veth %s)", rail0.Type, rail0.MAC, nic.RDMA, nic.MAC)
		}
	case api.ModeMacvlan:
		if rail0.Type != "macvlan" || rail0.MAC == nic.MAC.String() {
			t.Errorf("rail0 is %s %s, want a macvlan child of %s", rail0.Type, rail0.MAC, nic.Name)
		}
	}
	routes, err := pod.Routes()
	if err != nil {
		t.Fatal(err)
	}
	var defaults []string
	for _, r := range routes {
		if r.Dst == "default" {
			defaults = append(defaults, r.Dev)
		}
	}
	if !slices.Equal(defaults, []string{"eth0"}) {
		t.Errorf("default routes via %v, want only via eth0 (routes: %+v)", defaults, routes)
	}
}

// checkResult: the merged result lists eth0 and rail0 with the sandbox,
// MAC (and from 1.0.0 on MTU and PCI address), and IPs pointing at them.
func checkResult(t *testing.T, node *harness.Node, pod *harness.Pod, res *current.Result, version string,
	tc attachCase, lease api.Lease) {
	t.Helper()
	ethIdx, eth := podInterface(res, "eth0")
	if eth == nil || len(ipsOf(res, ethIdx)) == 0 {
		t.Errorf("result has no eth0 with an address: %s", res)
	}
	idx, rail0 := podInterface(res, "rail0")
	if rail0 == nil {
		t.Fatalf("result has no rail0: %s", res)
	}
	link, _, err := pod.Link("rail0")
	if err != nil {
		t.Fatal(err)
	}
	if rail0.Sandbox != pod.Netns.Path || rail0.Mac != link.MAC {
		t.Errorf("result rail0 sandbox=%q mac=%q, want %q %q", rail0.Sandbox, rail0.Mac, pod.Netns.Path, link.MAC)
	}
	if hasMTU(version) {
		spec, _ := node.Machine.NIC(tc.wantNICs[0])
		if rail0.Mtu != link.MTU || rail0.PciID != spec.PCI {
			t.Errorf("result rail0 mtu=%d pciID=%q, want %d %q", rail0.Mtu, rail0.PciID, link.MTU, spec.PCI)
		}
	}
	if got := ipsOf(res, idx); !slices.Equal(got, []string{lease.Address}) {
		t.Errorf("result IPs of rail0 %v, want [%s]", got, lease.Address)
	}
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}
