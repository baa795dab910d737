package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netnstest"
)

// machine has 8 GPUs, each with its own InfiniBand NIC, and an Ethernet
// NIC per socket: move pods take the NICs of GPUs 0-3 (mlx5_0..mlx5_3),
// macvlan pods share the Ethernet NICs mlx5_4 (socket 0) and mlx5_9
// (socket 1), rail-ipam pods get macvlan children of mlx5_4.
const machine = "gpu8-nic8"

// moveNICs are the NICs move pods may take, one pod each.
var moveNICs = []string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}

// pools are raild's pools; every pod picks one with rail.dev/pool.
var pools = []ipam.PoolConfig{
	{Name: "prefill", Subnet: "10.100.0.0/22"},
	{Name: "decode", Subnet: "10.101.0.0/22"},
}

// raildTimeout bounds each plugin's call to raild: generous, so a loaded
// machine is not mistaken for a dead raild.
const raildTimeout = "60s"

// cniTimeout bounds one CNI call (a plugin hung on a dead raild must fail
// with a message, not hang the test).
const cniTimeout = 2 * time.Minute

// kind is one way a pod gets its RDMA interface.
type kind struct {
	name      string
	network   *harness.Network
	ifName    string   // CNI_IFNAME the runtime passes
	podIf     string   // the pod interface that carries the lease's address
	gpus      []string // GPU indices whose closest NIC is one the kind may use
	exclusive bool     // the NIC itself moves into the pod (one pod per NIC)
	gcReaches bool     // CNI GC of the network reaches the plugin that holds the lease
}

// fleet is the node and the kinds of pods the tests make on it.
type fleet struct {
	node      *harness.Node
	kinds     []*kind
	moveSlots chan struct{} // one token per NIC move pods may take
}

func newFleet(t testing.TB) *fleet {
	t.Helper()
	netnstest.RequireRoot(t, "creates network namespaces, veth and macvlan links")
	node, err := harness.NewNode(harness.NodeOptions{Machine: machine, Bins: bins, Pools: pools, NamePrefix: "rc"})
	if err != nil {
		t.Fatalf("new node %s: %v", machine, err)
	}
	t.Cleanup(func() {
		if t.Failed() && node.Raild != nil {
			t.Logf("raild log (last lines):\n%s", node.Raild.LogTail(40))
		}
		if err := node.Close(); err != nil {
			t.Errorf("close node: %v", err)
		}
	})
	f := &fleet{node: node, moveSlots: make(chan struct{}, len(moveNICs))}
	for range cap(f.moveSlots) {
		f.moveSlots <- struct{}{}
	}
	f.kinds = []*kind{
		{name: "move", network: f.chain(t, "rc-move", "10.88.0.0/24", api.ModeMove, moveNICs...),
			ifName: "eth0", podIf: "rail0", gpus: []string{"0", "1", "2", "3"}, exclusive: true, gcReaches: true},
		{name: "macvlan", network: f.chain(t, "rc-macvlan", "10.89.0.0/24", api.ModeMacvlan, "mlx5_4", "mlx5_9"),
			ifName: "eth0", podIf: "rail0", gpus: []string{"2", "6"}, gcReaches: true},
		{name: "ipam", network: f.ipamNetwork(t, "rc-ipam", "mlx5_4"), ifName: "net1", podIf: "net1", gpus: []string{"2"}},
	}
	return f
}

// chain is ptp (eth0) then rail in mode, limited to nics.
func (f *fleet) chain(t testing.TB, name, subnet string, mode api.Mode, nics ...string) *harness.Network {
	t.Helper()
	rail := f.node.RailPlugin(map[string]any{"mode": mode, "nics": nics, "timeout": raildTimeout})
	n, err := f.node.Network(name, "1.1.0", f.node.PTP(subnet), rail)
	if err != nil {
		t.Fatalf("conflist %s: %v", name, err)
	}
	return n
}

// ipamNetwork is upstream macvlan on nic's netdev with rail-ipam leases,
// as a Multus network would run it (the pod's second interface, net1).
func (f *fleet) ipamNetwork(t testing.TB, name, nic string) *harness.Network {
	t.Helper()
	macvlan := map[string]any{
		"type": "macvlan", "master": f.node.Machine.Netdevs[nic], "mode": "bridge",
		"capabilities": map[string]any{harness.AnnotationsCapability: true},
		"ipam":         map[string]any{"type": "rail-ipam", "socket": f.node.Raild.Socket, "timeout": raildTimeout},
	}
	n, err := f.node.Network(name, "1.1.0", macvlan)
	if err != nil {
		t.Fatalf("conflist %s: %v", name, err)
	}
	return n
}

// podSpec is a pod as the kubelet knows it: it keeps its name, kind and
// pool across the sandboxes a retried start makes.
type podSpec struct {
	name string
	kind *kind
	pool string
	gpu  string
}

// pickSpec draws a pod: its kind (move only when a move NIC is free, the
// token then held until the pod is gone), pool and GPU.
func (f *fleet) pickSpec(rng *rand.Rand, name string) podSpec {
	k := f.kinds[rng.IntN(len(f.kinds))]
	if k.exclusive && !f.takeMoveSlot() {
		k = f.kinds[1+rng.IntN(len(f.kinds)-1)]
	}
	return podSpec{name: name, kind: k, pool: pools[rng.IntN(len(pools))].Name, gpu: k.gpus[rng.IntN(len(k.gpus))]}
}

func (f *fleet) takeMoveSlot() bool {
	select {
	case <-f.moveSlots:
		return true
	default:
		return false
	}
}

// done gives back what the pod held of the fleet.
func (f *fleet) done(spec podSpec) {
	if spec.kind.exclusive {
		f.moveSlots <- struct{}{}
	}
}

// newSandbox makes a fresh sandbox (netns, ID) for the pod.
func (f *fleet) newSandbox(spec podSpec) (*harness.Pod, error) {
	pod, err := f.node.NewPod("chaos", spec.name, map[string]string{
		api.AnnotationGPUs: spec.gpu, api.AnnotationPool: spec.pool, api.AnnotationAttach: "true",
	})
	if err != nil {
		return nil, err
	}
	pod.IfName = spec.kind.ifName
	return pod, nil
}

// add runs ADD of the pod's network and returns the address its rail
// interface got.
func (f *fleet) add(spec podSpec, pod *harness.Pod) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cniTimeout)
	defer cancel()
	raw, err := spec.kind.network.Add(ctx, pod)
	if err != nil {
		return "", err
	}
	res, err := harness.ToCurrent(raw)
	if err != nil {
		return "", err
	}
	for i, iface := range res.Interfaces {
		if iface.Name != spec.kind.podIf || iface.Sandbox == "" {
			continue
		}
		for _, ip := range res.IPs {
			if ip.Interface != nil && *ip.Interface == i {
				return ip.Address.String(), nil
			}
		}
	}
	return "", fmt.Errorf("ADD of %s answered no address on %s: %s", spec.name, spec.kind.podIf, describeResult(res.IPs))
}

// del runs DEL of the pod's network.
func (f *fleet) del(spec podSpec, pod *harness.Pod) error {
	ctx, cancel := context.WithTimeout(context.Background(), cniTimeout)
	defer cancel()
	return spec.kind.network.Del(ctx, pod)
}

// gc runs CNI GC of every network, naming the pods still alive on each.
func (f *fleet) gc(live []*podRec) error {
	ctx, cancel := context.WithTimeout(context.Background(), cniTimeout)
	defer cancel()
	for _, k := range f.kinds {
		var valid []*harness.Pod
		for _, rec := range live {
			if rec.spec.kind == k {
				valid = append(valid, rec.pod)
			}
		}
		if err := k.network.GC(ctx, valid...); err != nil {
			return fmt.Errorf("CNI GC of %s: %w", k.network.List.Name, err)
		}
	}
	return nil
}

func describeResult[T fmt.Stringer](ips []T) string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return "[" + strings.Join(out, " ") + "]"
}
