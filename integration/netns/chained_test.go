package netns

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

func cniCode(err error) uint {
	var e *types.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// linkNames lists the pod's interfaces.
func linkNames(t *testing.T, pod *harness.Pod) []string {
	t.Helper()
	links, err := pod.Links()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range links {
		names = append(names, l.Name)
	}
	slices.Sort(names)
	return names
}

// TestPassThrough: in a chained conflist, a pod that holds no GPU and has
// no rail annotation, or a GPU pod that opts out, gets eth0 only: the
// primary's result as is, no lease, nothing on the node; its DEL is clean.
// The NIC it did not take serves the next pod that asks.
func TestPassThrough(t *testing.T) {
	for _, version := range []string{"0.3.1", "1.1.0"} {
		for _, tc := range []struct {
			name        string
			annotations map[string]string
		}{
			{"plain pod", nil},
			{"gpu pod opts out", map[string]string{api.AnnotationGPUs: "0", api.AnnotationAttach: "false"}},
		} {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				node := newNode(t, harness.NodeOptions{Machine: "lab-1x1"})
				before := snapshot(t, node)
				network := chain(t, node, version, map[string]any{"mode": api.ModeMove})
				primaryOnly, err := node.Network("railnet", version, node.PTP(ptpSubnet))
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				pod := newPod(t, node, "web", tc.annotations)
				raw, err := network.Add(ctx, pod)
				if err != nil {
					t.Fatalf("ADD: %v", err)
				}
				if raw.Version() != version {
					t.Errorf("result version %s, want %s", raw.Version(), version)
				}
				res, _ := harness.ToCurrent(raw)
				if _, rail0 := podInterface(res, "rail0"); rail0 != nil || len(res.IPs) != 1 {
					t.Errorf("pass-through result %s: want the primary's eth0 and its one address only", res)
				}
				if got := linkNames(t, pod); !slices.Equal(got, []string{"eth0", "lo"}) {
					t.Errorf("pod links %v, want eth0 and lo", got)
				}
				if held := leases(t, node); len(held) != 0 {
					t.Errorf("a pass-through pod holds leases: %+v", held)
				}
				if hasCheck(version) {
					if err := network.CheckPlugin(ctx, pod, "rail"); err != nil {
						t.Errorf("CHECK of a pass-through pod: %v", err)
					}
				}
				// The NIC is still free for a pod that asks.
				gpuPod := newPod(t, node, "gpu", map[string]string{api.AnnotationGPUs: "0"})
				if _, err := network.Add(ctx, gpuPod); err != nil {
					t.Fatalf("ADD of the GPU pod after a pass-through: %v", err)
				}
				for _, p := range []*harness.Pod{pod, gpuPod} {
					if err := network.Del(ctx, p); err != nil {
						t.Fatalf("DEL %s: %v", p.Name, err)
					}
				}
				_ = primaryOnly
				requireClean(t, node, before)
			})
		}
	}
}

// TestRaildDown: with raild stopped, a pod that carries a rail annotation
// fails with code 11 whatever onRaildDown says; a pod that did not ask
// fails with code 11 by default, and starts without RDMA (eth0 only, the
// reason logged) with onRaildDown: pass-through. DEL of either is clean.
func TestRaildDown(t *testing.T) {
	tests := []struct {
		name        string
		onRaildDown string
		annotations map[string]string
		wantCode    uint
	}{
		{"default fails, kubelet retries", "", nil, api.CodeTryAgainLater},
		{"pass-through starts the pod", "pass-through", nil, 0},
		{"annotated pod fails even with pass-through", "pass-through", map[string]string{api.AnnotationAttach: "true"}, api.CodeTryAgainLater},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := newNode(t, harness.NodeOptions{Machine: "lab-1x1"})
			before := snapshot(t, node)
			fields := map[string]any{"mode": api.ModeMove}
			if tt.onRaildDown != "" {
				fields["onRaildDown"] = tt.onRaildDown
			}
			network := chain(t, node, "0.3.1", fields)
			if err := node.Raild.Stop(); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			pod := newPod(t, node, "web", tt.annotations)
			_, err := network.Add(ctx, pod)
			if cniCode(err) != tt.wantCode || (err != nil) != (tt.wantCode != 0) {
				t.Fatalf("ADD with raild down: %v, want code %d", err, tt.wantCode)
			}
			if tt.wantCode == 0 {
				if got := linkNames(t, pod); !slices.Equal(got, []string{"eth0", "lo"}) {
					t.Errorf("pod links %v, want eth0 and lo", got)
				}
				if err := network.Del(ctx, pod); err != nil {
					t.Fatalf("DEL with raild down: %v", err)
				}
			}
			if err := node.Raild.Start(); err != nil {
				t.Fatal(err)
			}
			if tt.wantCode != 0 {
				// The runtime cleans up the failed ADD, as containerd does.
				if err := network.Del(ctx, pod); err != nil {
					t.Fatalf("DEL after the failed ADD: %v", err)
				}
			}
			requireClean(t, node, before)
		})
	}
}

// TestDelAfterNetconfChange: a NIC added in move mode comes back on DEL
// even when the netconf now says macvlan (DEL follows the lease and the
// link's alias, never the netconf), and the next pod gets it.
func TestDelAfterNetconfChange(t *testing.T) {
	node := newNode(t, harness.NodeOptions{Machine: "lab-1x1"})
	before := snapshot(t, node)
	ctx := context.Background()
	moved := chain(t, node, "1.1.0", map[string]any{"mode": api.ModeMove})
	changed := chain(t, node, "1.1.0", map[string]any{"mode": api.ModeMacvlan})
	pod := newPod(t, node, "a", map[string]string{api.AnnotationGPUs: "0"})
	if _, err := moved.Add(ctx, pod); err != nil {
		t.Fatalf("ADD: %v", err)
	}
	if err := changed.Del(ctx, pod); err != nil {
		t.Fatalf("DEL with the changed netconf: %v", err)
	}
	if got := linkNames(t, pod); !slices.Equal(got, []string{"lo"}) {
		t.Errorf("pod links after DEL %v, want lo only: the NIC stayed in the pod", got)
	}
	next := newPod(t, node, "b", map[string]string{api.AnnotationGPUs: "0"})
	if _, err := moved.Add(ctx, next); err != nil {
		t.Fatalf("the next pod's ADD: %v", err)
	}
	if err := moved.Del(ctx, next); err != nil {
		t.Fatal(err)
	}
	requireClean(t, node, before)
}

// TestOwnNetnsRefused: CNI_NETNS naming the netns the plugin runs in is
// refused before anything changes (code 4); DEL of that call succeeds.
func TestOwnNetnsRefused(t *testing.T) {
	node := newNode(t, harness.NodeOptions{Machine: "lab-1x1"})
	before := snapshot(t, node)
	ctx := context.Background()
	network, err := node.Network("railonly", "1.1.0", node.RailPlugin(map[string]any{"mode": api.ModeMove}))
	if err != nil {
		t.Fatal(err)
	}
	pod := newPod(t, node, "host", map[string]string{api.AnnotationGPUs: "0"})
	rt := pod.RuntimeConf()
	rt.NetNS, rt.IfName = node.Netns.Path, "net1"
	_, err = network.AddRuntime(ctx, rt)
	if cniCode(err) != types.ErrInvalidEnvironmentVariables || !strings.Contains(err.Error(), "host's own") {
		t.Fatalf("ADD into the plugin's own netns: %v, want code 4", err)
	}
	if err := network.DelRuntime(ctx, rt); err != nil {
		t.Fatalf("DEL of the refused call: %v", err)
	}
	requireClean(t, node, before)
}

// TestTwoRailNetworksOnePrefix: a second chained rail network with the
// same ifPrefix fails with code 7 naming ifPrefix; the first is untouched.
func TestTwoRailNetworksOnePrefix(t *testing.T) {
	node := newNode(t, harness.NodeOptions{Machine: "gpu8-nic8"})
	before := snapshot(t, node)
	ctx := context.Background()
	first := chain(t, node, "1.1.0", map[string]any{"mode": api.ModeMacvlan})
	second, err := node.Network("railnet2", "1.1.0", node.PTP("10.89.0.0/24"), node.RailPlugin(map[string]any{"mode": api.ModeMacvlan}))
	if err != nil {
		t.Fatal(err)
	}
	pod := newPod(t, node, "p", map[string]string{api.AnnotationGPUs: "0"})
	if _, err := first.Add(ctx, pod); err != nil {
		t.Fatalf("first network: %v", err)
	}
	pod.IfName = "eth1"
	_, err = second.Add(ctx, pod)
	if cniCode(err) != api.CodeInvalidConfig || !strings.Contains(err.Error(), "ifPrefix") {
		t.Fatalf("second network: %v, want code 7 naming ifPrefix", err)
	}
	if held := leases(t, node); len(held) != 1 || held[0].Network != "railnet" {
		t.Errorf("leases %+v, want the first network's only", held)
	}
	if err := second.Del(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.IfName = "eth0"
	if err := first.Del(ctx, pod); err != nil {
		t.Fatal(err)
	}
	requireClean(t, node, before)
}
