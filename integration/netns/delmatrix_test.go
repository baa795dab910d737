package netns

import (
	"context"
	"slices"
	"testing"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// delEnv is one DEL-matrix run: a single-NIC node, the chain, a pod
// factory.
type delEnv struct {
	t       *testing.T
	node    *harness.Node
	network *harness.Network
	ctx     context.Context
}

func (e *delEnv) pod(name string) *harness.Pod {
	return newPod(e.t, e.node, name, map[string]string{api.AnnotationGPUs: "0"})
}

func (e *delEnv) add(pod *harness.Pod) {
	e.t.Helper()
	add(e.t, e.network, pod)
}

// del runs DEL with the pod's runtime config, changed by edit, and
// requires success.
func (e *delEnv) del(pod *harness.Pod, what string, edit func(*harness.Pod) *harness.Pod) {
	e.t.Helper()
	rt := pod.RuntimeConf()
	if edit != nil {
		rt = edit(pod).RuntimeConf()
	}
	if err := e.network.DelRuntime(e.ctx, rt); err != nil {
		e.t.Errorf("DEL (%s) failed, want success: %v", what, err)
	}
}

func (e *delEnv) deleteNetns(pod *harness.Pod) {
	e.t.Helper()
	if err := e.node.DeletePodNetns(pod); err != nil {
		e.t.Fatalf("delete netns of %s: %v", pod.Name, err)
	}
}

func (e *delEnv) restartRaild() {
	e.t.Helper()
	if err := e.node.Raild.Restart(); err != nil {
		e.t.Fatalf("restart raild: %v", err)
	}
}

// noNetns is the pod as a runtime describes it once its netns is gone
// (containerd's second DEL): CNI_NETNS empty.
func noNetns(p *harness.Pod) *harness.Pod {
	c := *p
	c.Netns = nil
	return &c
}

type delCase struct {
	name string
	run  func(e *delEnv)
}

var delCases = []delCase{
	{"netns deleted before DEL", func(e *delEnv) {
		p := e.pod("a")
		e.add(p)
		e.deleteNetns(p)
		e.del(p, "netns gone", nil)
	}},
	{"empty CNI_NETNS after the netns is gone", func(e *delEnv) {
		p := e.pod("a")
		e.add(p)
		e.deleteNetns(p)
		e.del(p, "CNI_NETNS empty", noNetns)
	}},
	{"DEL then DEL with empty CNI_NETNS", func(e *delEnv) {
		p := e.pod("a")
		e.add(p)
		e.del(p, "stop", nil)
		e.deleteNetns(p)
		e.del(p, "remove, CNI_NETNS empty", noNetns)
	}},
	{"empty CNI_NETNS while the netns lives", func(e *delEnv) {
		p := e.pod("a")
		e.add(p)
		e.del(p, "CNI_NETNS empty", noNetns)
		e.deleteNetns(p)
	}},
	{"raild stopped during DEL", func(e *delEnv) {
		p := e.pod("a")
		e.add(p)
		if err := e.node.Raild.Stop(); err != nil {
			e.t.Fatal(err)
		}
		e.del(p, "raild down", nil)
		e.deleteNetns(p)
		if err := e.node.Raild.Start(); err != nil {
			e.t.Fatal(err)
		}
	}},
	{"DEL twice", func(e *delEnv) {
		p := e.pod("a")
		e.add(p)
		e.del(p, "first", nil)
		e.del(p, "second", nil)
		e.deleteNetns(p)
	}},
	{"DEL for an unknown container", func(e *delEnv) {
		p := e.pod("never-added")
		e.del(p, "unknown container", nil)
		e.del(p, "unknown container, CNI_NETNS empty", noNetns)
		e.deleteNetns(p)
	}},
	// libcni's GC first DELs the attachments it has cached and are not valid.
	{"late DEL after CNI GC handed the NIC on", func(e *delEnv) {
		lateDel(e, func() {
			if err := e.network.GC(e.ctx); err != nil {
				e.t.Fatalf("GC: %v", err)
			}
		})
	}},
	{"late DEL after a CNI GC without cached attachments handed the NIC on", func(e *delEnv) {
		lateDel(e, func() {
			if err := e.network.WithCacheDir(e.t.TempDir()).GC(e.ctx); err != nil {
				e.t.Fatalf("GC: %v", err)
			}
		})
	}},
	{"late DEL after raild's restart reconcile handed the NIC on", func(e *delEnv) {
		lateDel(e, e.restartRaild)
	}},
}

// lateDel: pod A's netns goes without DEL, its lease is released by
// release(), pod B gets the node's only NIC, then A's DEL arrives late. It
// must succeed without touching B's interface.
func lateDel(e *delEnv, release func()) {
	a := e.pod("a")
	e.add(a)
	aNICs := leases(e.t, e.node)[0].NICs
	e.deleteNetns(a)
	release()
	if l := leases(e.t, e.node); len(l) != 0 {
		e.t.Fatalf("A's lease survived the release: %+v", l)
	}
	b := e.pod("b")
	e.add(b)
	held := leases(e.t, e.node)
	if len(held) != 1 || held[0].Sandbox != b.Sandbox || !slices.Equal(held[0].NICs, aNICs) {
		e.t.Fatalf("B should hold A's former NIC %v: %+v", aNICs, held)
	}
	before, _, err := b.Link("rail0")
	if err != nil {
		e.t.Fatal(err)
	}
	e.del(a, "late DEL of A", nil)
	e.del(a, "late DEL of A, CNI_NETNS empty", noNetns)
	after, found, err := b.Link("rail0")
	if err != nil || !found || after.MAC != before.MAC || !slices.Equal(after.Addrs, before.Addrs) || !after.Up {
		e.t.Errorf("A's late DEL touched B's rail0: before %+v, after %+v (found=%v, err=%v)", before, after, found, err)
	}
	if err := e.network.CheckPlugin(e.ctx, b, "rail"); err != nil {
		e.t.Errorf("CHECK of B after A's late DEL: %v", err)
	}
	if l := leases(e.t, e.node); len(l) != 1 || l[0].Sandbox != b.Sandbox {
		e.t.Errorf("leases after A's late DEL: %+v, want only B's", l)
	}
	e.del(b, "B", nil)
	e.deleteNetns(b)
}

// TestDelMatrix: every DEL a runtime can send in a bad moment succeeds and,
// once the runtime has removed the netns, nothing is left on the node.
func TestDelMatrix(t *testing.T) {
	for _, mode := range []api.Mode{api.ModeMove, api.ModeMacvlan} {
		for _, tc := range delCases {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) {
				node := newNode(t, harness.NodeOptions{Machine: "lab-1x1"})
				before := snapshot(t, node)
				e := &delEnv{t: t, node: node, network: chain(t, node, "1.1.0", map[string]any{"mode": mode}),
					ctx: context.Background()}
				tc.run(e)
				requireClean(t, node, before)
			})
		}
	}
}
