package netns

import (
	"context"
	"sync"
	"testing"

	"github.com/containernetworking/cni/libcni"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// TestRepeatedAddKeepsTheLease: an ADD of an attachment that already
// holds a lease — ten at once, or one repeated after the pod's rail
// interface was set down — never releases the lease the pod uses.
// Afterwards the lease is still held, the pod keeps its interface with the
// lease's address, and the next pod never gets that address (in move mode,
// never the NIC either).
func TestRepeatedAddKeepsTheLease(t *testing.T) {
	tests := []struct {
		name   string
		mode   api.Mode
		repeat func(t *testing.T, network *harness.Network, pod *harness.Pod, rt *libcni.RuntimeConf)
	}{
		{"ten concurrent ADDs, macvlan", api.ModeMacvlan, concurrentAdds},
		{"ten concurrent ADDs, move", api.ModeMove, concurrentAdds},
		{"ADD repeated after the interface was set down, macvlan", api.ModeMacvlan, addAfterSetDown},
		{"ADD repeated after the interface was set down, move", api.ModeMove, addAfterSetDown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := newNode(t, harness.NodeOptions{Machine: "lab-1x1"})
			before := snapshot(t, node)
			ctx := context.Background()
			// rail alone, as Multus runs a NAD: the pod interface is CNI_IFNAME.
			network, err := node.Network("railnet", "1.1.0", node.RailPlugin(map[string]any{"mode": tc.mode}))
			if err != nil {
				t.Fatal(err)
			}
			gpu := map[string]string{api.AnnotationGPUs: "0"}
			pod := newPod(t, node, "a", gpu)
			rt := pod.RuntimeConf()
			rt.IfName = "net1"
			tc.repeat(t, network, pod, rt)

			held := leases(t, node)
			if len(held) != 1 || held[0].Sandbox != pod.Sandbox {
				t.Fatalf("leases after the repeated ADD: %+v, want pod a's one lease", held)
			}
			link, ok, err := pod.Link("net1")
			if err != nil || !ok || len(link.Addrs) != 1 || link.Addrs[0] != held[0].Address {
				t.Fatalf("pod a's net1 = %+v (found %v, %v), want it with its lease's address %s", link, ok, err, held[0].Address)
			}

			next := newPod(t, node, "b", gpu)
			nextRT := next.RuntimeConf()
			nextRT.IfName = "net1"
			_, nextErr := network.AddRuntime(ctx, nextRT)
			switch {
			case tc.mode == api.ModeMove && cniCode(nextErr) != api.CodeNoNIC:
				t.Errorf("pod b's ADD = %v, want code %d: pod a holds the only NIC", nextErr, api.CodeNoNIC)
			case tc.mode == api.ModeMacvlan && nextErr != nil:
				t.Errorf("pod b's ADD: %v", nextErr)
			}
			for _, l := range leases(t, node) {
				if l.Sandbox == next.Sandbox && l.Address == held[0].Address {
					t.Errorf("pod b got %s, the address pod a still uses", l.Address)
				}
			}
			for _, rt := range []*libcni.RuntimeConf{nextRT, rt} {
				if err := network.DelRuntime(ctx, rt); err != nil {
					t.Errorf("DEL %s: %v", rt.ContainerID, err)
				}
			}
			requireClean(t, node, before)
		})
	}
}

// concurrentAdds runs ten ADDs of one attachment at once, each through a
// runtime with its own CNI cache. rail runs them one after the other (it
// locks the pod's netns from raild's answer to the end of a rollback), so
// every later one finds the attachment done and succeeds.
func concurrentAdds(t *testing.T, network *harness.Network, _ *harness.Pod, rt *libcni.RuntimeConf) {
	t.Helper()
	const adds = 10
	errs := make([]error, adds)
	var wg sync.WaitGroup
	for i := range adds {
		own := network.WithCacheDir(t.TempDir())
		wg.Go(func() { _, errs[i] = own.AddRuntime(context.Background(), rt) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent ADD %d: %v", i, err)
		}
	}
}

// addAfterSetDown adds, sets the pod's interface down, and adds again:
// the second ADD finds the interface not as attached and fails.
func addAfterSetDown(t *testing.T, network *harness.Network, pod *harness.Pod, rt *libcni.RuntimeConf) {
	t.Helper()
	ctx := context.Background()
	if _, err := network.AddRuntime(ctx, rt); err != nil {
		t.Fatalf("first ADD: %v", err)
	}
	h, err := pod.Netns.Netlink()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	link, err := h.LinkByName(rt.IfName)
	if err == nil {
		err = h.LinkSetDown(link)
	}
	if err != nil {
		t.Fatalf("set %s down in the pod: %v", rt.IfName, err)
	}
	if _, err := network.AddRuntime(ctx, rt); err == nil {
		t.Fatal("the repeated ADD succeeded with the interface down, want it refused")
	} else {
		t.Logf("repeated ADD: %v", err)
	}
	if err := h.LinkSetUp(link); err != nil {
		t.Fatalf("set %s up again: %v", rt.IfName, err)
	}
}
