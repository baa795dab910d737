package fabric

import (
	"fmt"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// TestFabric runs two nodes joined by two wires (run.sh) and the product on
// both, then the scenarios of integration/fabric/README.md in order, each
// against both nodes.
func TestFabric(t *testing.T) {
	r := requireRig(t)
	a, b := r.newNode(t, "a"), r.newNode(t, "b")
	image := r.buildImage(t, a, b)
	var floor figures
	t.Run("floor: two netns made by hand on the rail-0 wire", func(t *testing.T) {
		fa, fb := a.addFloor(t, 0, "10.79.0.1"), b.addFloor(t, 0, "10.79.0.2")
		floor = transfer(t, "floor", endpointOf{fa, fa.dev, 0, fa.addr}, endpointOf{fb, fb.dev, 0, fb.addr}, 18600)
	})
	t.Logf("floor: %+v", floor)
	for _, n := range []*node{a, b} {
		n.run(t, "rxe on the NICs", time.Minute, fmt.Sprintf("rdma link add rxe_r0 type rxe netdev %s && rdma link add rxe_r1 type rxe netdev %s", n.nics[0].name, n.nics[1].name))
	}
	startNodes(t, nodeConfig{mode: api.ModeMacvlan}, image, a, b)
	t.Run("across nodes: prefill on a, decode on b, by their GPUs", func(t *testing.T) { acrossNodes(t, a, b) })
}

// acrossNodes: a prefill pod on node a and a decode pod on node b, each
// given GPU 0, get rail 0's NIC (PIX to GPU 0) and addresses of their
// node's slice of pool rail0, and reach each other over the wire.
func acrossNodes(t *testing.T, a, b *node) {
	prefill := a.runPod(t, "prefill", map[string]string{api.AnnotationGPUs: "0"})
	decode := b.runPod(t, "decode", map[string]string{api.AnnotationGPUs: "0"})
	for _, p := range []*pod{prefill, decode} {
		l := p.lease(t, "rail0")
		t.Logf("node %s: pod %s: lease %+v", p.n.name, p.name, l)
		if l.Pool != "rail0" {
			t.Errorf("node %s: pod %s: pool %q, want rail0 (GPU 0's NIC is rail 0)", p.n.name, p.name, l.Pool)
		}
	}
	ca, cb := a.counters(t), b.counters(t)
	out := prefill.exec(t, "ping decode", time.Minute, fmt.Sprintf("ping -c 5 -W 5 %s", decode.addr(t, "rail0")))
	da, db := a.counters(t).delta(ca), b.counters(t).delta(cb)
	t.Logf("ping:\n%s\nnode a: %v\nnode b: %v", out, da, db)
	if da.nicTX[0] < 5 || db.nicRX[0] < 5 {
		t.Errorf("5 pings left a by rail 0 %d times and reached b's rail 0 %d times: want at least 5 each", da.nicTX[0], db.nicRX[0])
	}
}
