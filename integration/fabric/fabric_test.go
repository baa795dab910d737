package fabric

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
)

// TestFabric runs two nodes joined by two wires (run.sh) and the product on
// both in softRoCE mode, then the scenarios of integration/fabric/README.md
// in order, each against both nodes.
func TestFabric(t *testing.T) {
	r := requireRig(t)
	a, b := r.newNode(t, "a"), r.newNode(t, "b")
	image := r.buildImage(t, a, b)
	var floor, pods figures
	t.Run("floor: two netns made by hand on the rail-0 wire", func(t *testing.T) {
		fa, fb := a.addFloor(t, 0, "10.79.0.1"), b.addFloor(t, 0, "10.79.0.2")
		floor = transfer(t, "floor", endpointOf{fa, fa.dev, 0, fa.addr}, endpointOf{fb, fb.dev, 0, fb.addr}, 18600)
	})
	if t.Failed() {
		return // the wires or the tools do not work: nothing of the product can
	}
	// A softRoCE node's NICs are its virtio-net functions, which have no
	// RDMA device: raild places them by their netdevs, and no RDMA device of
	// the node's netns sits on a pod's parent (the kernel would mirror the
	// pod's address into its GID table and it would take the pod's
	// rdma_cm). Pods get their own rxe.
	startNodes(t, nodeConfig{mode: api.ModeMacvlan, softRoCE: true}, image, a, b)
	before := map[*node]nodeState{a: a.state(t), b: b.state(t)}

	t.Run("across nodes: prefill on a, decode on b, by their GPUs", func(t *testing.T) {
		prefill := a.runPod(t, "prefill", map[string]string{api.AnnotationGPUs: "0"})
		decode := b.runPod(t, "decode", map[string]string{api.AnnotationGPUs: "0"})
		t.Run("transfers over the rail-0 wire", func(t *testing.T) {
			pa, pb := podEndpoint(t, prefill, "rail0", 0, "rail0"), podEndpoint(t, decode, "rail0", 0, "rail0")
			pods = transfer(t, "across nodes", pa, pb, 18700)
		})
		t.Run("readiness: doctor --pod and RDMAReady on both nodes; a port down on a flips its pod", func(t *testing.T) {
			checkReady(t, prefill, 0)
			checkReady(t, decode, 0)
			portDownFlipsReady(t, prefill, 0)
		})
	})
	t.Run("clean: after the pods go both nodes are as before", func(t *testing.T) { checkAsBefore(t, before) })
	for _, mode := range []api.Mode{api.ModeMacvlan, api.ModeIPVLAN} {
		t.Run(fmt.Sprintf("one port, two pods (%s): prefill and decode on a's rail 0 both to b at once", mode), func(t *testing.T) {
			for _, n := range []*node{a, b} {
				n.setMode(t, mode)
			}
			onePortTwoPods(t, a, b, mode)
		})
	}
	for _, n := range []*node{a, b} {
		n.setMode(t, api.ModeMacvlan)
	}
	t.Run("clean: after the shared-port pods", func(t *testing.T) { checkAsBefore(t, before) })
	t.Run("two rails, one subnet: rail-1 traffic leaves and arrives by rail 1", func(t *testing.T) { twoRails(t, a, b) })
	t.Run("clean: after raild SIGKILL with pods attached, restart and teardown leave nothing", func(t *testing.T) {
		killedWithPods(t, a, b)
		checkAsBefore(t, before)
	})
	if floor.writeBW > 0 && pods.writeBW > 0 {
		t.Logf("speed (TCG, MB/s): floor ib_write_bw %.2f, ucx_perftest %.2f; Rail's pods ib_write_bw %.2f (%.0f%% of the floor), ucx_perftest %.2f (%.0f%%)",
			floor.writeBW, floor.ucx, pods.writeBW, 100*pods.writeBW/floor.writeBW, pods.ucx, 100*pods.ucx/max(floor.ucx, 1e-9))
	}
}

// podEndpoint is a pod's side of a transfer on interface ifname: its
// device is the one the container's UCX_NET_DEVICES names, which must be
// the rxe Rail made on that interface; the engines' variables must agree.
func podEndpoint(t *testing.T, p *pod, ifname string, rail int, pool string) endpointOf {
	t.Helper()
	l := p.lease(t, ifname)
	if l.Pool != pool {
		t.Errorf("node %s: pod %s: %s from pool %q, want %s", p.n.name, p.name, ifname, l.Pool, pool)
	}
	if got, ok := p.n.railOf(l); !ok || got != rail {
		t.Errorf("node %s: pod %s: %s on NIC %v, want rail %d's (%s, %s)", p.n.name, p.name, ifname, l.NICs, rail, p.n.nics[rail].name, p.n.nics[rail].pci)
	}
	dev := rdma.SoftRoCEName(l.Sandbox, l.IfName)
	env := p.env(t)
	devs := strings.Split(env["UCX_NET_DEVICES"], ",")
	if !slices.Contains(devs, dev+":1") {
		t.Errorf("node %s: pod %s: UCX_NET_DEVICES=%q does not name %s:1, the rxe on %s", p.n.name, p.name, env["UCX_NET_DEVICES"], dev, ifname)
	}
	for _, k := range []string{"UCX_IB_GID_INDEX", "MC_GID_INDEX"} {
		if env[k] == "" || env[k] != env["NCCL_IB_GID_INDEX"] {
			t.Errorf("node %s: pod %s: %s=%q, want NCCL_IB_GID_INDEX's %q", p.n.name, p.name, k, env[k], env["NCCL_IB_GID_INDEX"])
		}
	}
	if env["UCX_UD_ETH_DGID_CHECK"] != "n" {
		t.Errorf("node %s: pod %s: UCX_UD_ETH_DGID_CHECK=%q, want n on a softRoCE node", p.n.name, p.name, env["UCX_UD_ETH_DGID_CHECK"])
	}
	if v, ok := env["UCX_TLS"]; ok {
		t.Errorf("node %s: pod %s: UCX_TLS=%q is set; Rail never sets it", p.n.name, p.name, v)
	}
	// the device's netdev is the pod's interface, and the container holds its uverbs node
	out := p.n.run(t, "the pod's rxe", time.Minute, fmt.Sprintf(`set -e
cat /sys/class/infiniband/%[1]s/parent
for u in /sys/class/infiniband_verbs/uverbs*; do [ "$(cat $u/ibdev)" != %[1]s ] || echo ${u##*/}; done`, dev))
	f := strings.Fields(out)
	if len(f) != 2 || f[0] != ifname {
		t.Fatalf("node %s: pod %s: rxe %s: parent and uverbs %q, want %s and one uverbs device", p.n.name, p.name, dev, out, ifname)
	}
	nodes := p.exec(t, "ls /dev/infiniband", time.Minute, "ls /dev/infiniband")
	if !slices.Contains(strings.Fields(nodes), f[1]) || !slices.Contains(strings.Fields(nodes), "rdma_cm") {
		t.Errorf("node %s: pod %s: /dev/infiniband holds %q, want %s and rdma_cm", p.n.name, p.name, nodes, f[1])
	}
	e := endpointOf{s: p, dev: dev, rail: rail, addr: p.addr(t, ifname).String()}
	checkBindsOwnDevice(t, e)
	return e
}

// checkBindsOwnDevice: an rdma_cm listener the container binds to the
// pod's address must sit on the pod's own device (the kernel's cm_id list,
// read on the node while it listens). Any RDMA device whose GID table holds
// the address can win rdma_cm's lookup, and a container can open only its
// own: a listener on another device is a pod whose RDMA path is the
// node's, and in a container rdma_bind_addr then fails (ENODEV).
func checkBindsOwnDevice(t *testing.T, e endpointOf) {
	t.Helper()
	p := e.s.(*pod)
	out := p.n.run(t, "where rdma_cm binds "+e.addr, time.Minute, fmt.Sprintf(`%s >/tmp/bind-%[2]s.out 2>&1 &
sleep 4
rdma res show cm_id | grep "src-addr %[2]s:" || true
wait
echo "== rping:"; cat /tmp/bind-%[2]s.out
# the same listener as root in the pod's netns (every device node): where the kernel binds it
pid=$(%[3]s inspect %[4]s | grep -m1 '"pid"' | tr -dc 0-9)
nsenter -t "$pid" -n timeout 8 rping -s -a %[2]s -C 1 >/dev/null 2>&1 &
sleep 4
echo "== as root:"; rdma res show cm_id | grep "src-addr %[2]s:" || true
wait`, p.execScript("timeout 8 rping -s -a "+e.addr+" -C 1"), e.addr, p.n.crictl(), p.ctr))
	listener, rest, _ := strings.Cut(out, "== rping:")
	rping, root, _ := strings.Cut(rest, "== as root:")
	f := strings.Fields(listener)
	if len(f) < 2 || f[0] != "link" || f[1] != e.dev+"/1" {
		t.Errorf("node %s: pod %s: an rdma_cm listener on %s binds to %q, want the pod's own %s/1 (rping in the container: %s; "+
			"as root in the pod's netns the kernel binds it to: %s)",
			p.n.name, p.name, e.addr, strings.TrimSpace(listener), e.dev, strings.TrimSpace(rping), strings.TrimSpace(root))
	}
}
