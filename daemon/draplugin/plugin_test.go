package draplugin

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/resourceslice"

	"github.com/railcni/rail/pkg/topology"
)

// TestRunPublishesAndFollowsTheNode runs the plugin against a fake API
// server: the slice appears with the node's devices, a port going down
// taints its device, and it comes back clean.
func TestRunPublishesAndFollowsTheNode(t *testing.T) {
	m := machine(t, "h100x8-cx7x4")
	var mu sync.Mutex
	current := m
	claims, err := OpenClaims(ClaimsFile(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode, UID: "node-uid"}})
	p, err := New(Options{Node: testNode, Kube: kube, Claims: claims, Config: Config{KubeletDir: filepath.Join(t.TempDir(), "kubelet")},
		View: func() NodeView {
			mu.Lock()
			defer mu.Unlock()
			return NodeView{Machine: current}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	await := func(what string, ok func(devs []resourcev1.Device) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			list, err := kube.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
			if err == nil && len(list.Items) == 1 && list.Items[0].Spec.Driver == "rail.dev" && *list.Items[0].Spec.NodeName == testNode &&
				ok(list.Items[0].Spec.Devices) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("the slice never showed %s", what)
	}
	taintOf := func(devs []resourcev1.Device, name string) (int, bool) {
		for _, d := range devs {
			if d.Name == name {
				return len(d.Taints), true
			}
		}
		return 0, false
	}
	await("4 devices", func(devs []resourcev1.Device) bool { return len(devs) == 4 })

	down := *m
	down.NICs = append([]topology.NIC(nil), m.NICs...)
	down.NICs[1].State = "DOWN"
	mu.Lock()
	current = &down
	mu.Unlock()
	p.MachineChanged()
	await("mlx5-1 tainted", func(devs []resourcev1.Device) bool { n, ok := taintOf(devs, "mlx5-1"); return ok && n == 1 })

	mu.Lock()
	current = m
	mu.Unlock()
	p.MachineChanged()
	await("mlx5-1 back", func(devs []resourcev1.Device) bool { n, ok := taintOf(devs, "mlx5-1"); return ok && n == 0 })
}

// TestDroppedTaintsFallBack: where the API server drops device taints,
// an unavailable device leaves the slice instead.
func TestDroppedTaintsFallBack(t *testing.T) {
	p := newPlugin(t, machine(t, "down-bond"), nil, t.TempDir())
	if _, ok := p.Catalog().Entries["mlx5-1"]; !ok {
		t.Fatal("no entry for the down port")
	}
	tainted := func() bool {
		for _, d := range p.Catalog().Devices {
			if d.Name == "mlx5-1" {
				return true
			}
		}
		return false
	}
	if !tainted() {
		t.Fatal("the down port is not published tainted")
	}
	desired := &resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{Devices: []resourcev1.Device{{Name: "mlx5-1",
		Taints: []resourcev1.DeviceTaint{{Key: "rail.dev/port-down", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}}}}
	actual := &resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{Devices: []resourcev1.Device{{Name: "mlx5-1"}}}}
	p.HandleError(context.Background(), &resourceslice.DroppedFieldsError{PoolName: testNode, DesiredSlice: desired, ActualSlice: actual}, "publish")
	p.rebuild()
	if tainted() {
		t.Fatal("the down port is still published after the API server dropped its taint")
	}
}
