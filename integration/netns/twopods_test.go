package netns

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/podinfo/podinfotest"
	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// servingPod is one pod of the prefill/decode pair.
type servingPod struct {
	name     string
	gpus     []int
	wantNICs []string
	pod      *harness.Pod
	railIP   net.IP
}

// TestPrefillDecode: on the 8-GPU machine a kubelet stand-in says prefill
// holds GPUs 0,1 and decode GPUs 4,5 (by UUID, as the NVIDIA device plugin
// reports them). Each pod gets the NIC the topology puts next to its GPUs,
// serves on its rail address :8000 and reaches the other over the rail.
func TestPrefillDecode(t *testing.T) {
	node := newNode(t, harness.NodeOptions{Machine: "h100x8-cx7x4", Kubelet: []podinfotest.Pod{}})
	pods := []*servingPod{
		{name: "prefill", gpus: []int{0, 1}, wantNICs: []string{"mlx5_0"}},
		{name: "decode", gpus: []int{4, 5}, wantNICs: []string{"mlx5_2"}},
	}
	setKubeletPods(t, node, pods)
	before := snapshot(t, node)
	network := chain(t, node, "1.1.0", map[string]any{"mode": api.ModeMove})
	ctx := context.Background()
	for _, sp := range pods {
		if got := closestNICs(t, node, sp.gpus, ""); !slices.Equal(got, sp.wantNICs) {
			t.Fatalf("raild topo: GPUs %v are closest to %v, the test expects %v", sp.gpus, got, sp.wantNICs)
		}
		sp.pod = newPod(t, node, sp.name, nil) // no annotation: the kubelet decides
		add(t, network, sp.pod)
	}
	byPod := leasesByPod(t, node)
	for _, sp := range pods {
		l, ok := byPod[sp.name]
		if !ok || !slices.Equal(l.NICs, sp.wantNICs) {
			t.Fatalf("%s: lease %+v, want NICs %v", sp.name, l, sp.wantNICs)
		}
		sp.railIP = leaseIP(t, l)
		if _, err := sp.pod.Serve(net.JoinHostPort(sp.railIP.String(), "8000")); err != nil {
			t.Fatal(err)
		}
	}
	for i, from := range pods {
		to := pods[1-i]
		url := fmt.Sprintf("http://%s/", net.JoinHostPort(to.railIP.String(), "8000"))
		body, err := from.pod.Get(ctx, url)
		if err != nil {
			t.Fatalf("%s -> %s over the rail: %v", from.name, to.name, err)
		}
		want := fmt.Sprintf("default/%s on %s:8000: hello %s:", to.name, to.railIP, from.railIP)
		if !strings.HasPrefix(body, want) {
			t.Errorf("%s -> %s answered %q, want it to start with %q", from.name, to.name, body, want)
		}
	}
	for _, sp := range pods {
		if err := network.Del(ctx, sp.pod); err != nil {
			t.Errorf("DEL %s: %v", sp.name, err)
		}
		if err := node.DeletePodNetns(sp.pod); err != nil {
			t.Error(err)
		}
	}
	requireClean(t, node, before)
}

func setKubeletPods(t *testing.T, node *harness.Node, pods []*servingPod) {
	t.Helper()
	var stub []podinfotest.Pod
	for _, sp := range pods {
		uuids, err := node.Machine.GPUUUIDs(sp.gpus...)
		if err != nil {
			t.Fatal(err)
		}
		stub = append(stub, podinfotest.Pod{Namespace: "default", Name: sp.name, Containers: []podinfotest.Container{
			{Name: "main", Devices: map[string][]string{"nvidia.com/gpu": uuids}},
		}})
	}
	if err := node.Kubelet.SetPods(stub); err != nil {
		t.Fatal(err)
	}
}

func leasesByPod(t *testing.T, node *harness.Node) map[string]api.Lease {
	t.Helper()
	out := map[string]api.Lease{}
	for _, l := range leases(t, node) {
		out[l.PodName] = l
	}
	return out
}
