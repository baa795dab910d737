package kapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/integration/kapi"
	"github.com/railcni/rail/integration/kubeletstub"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func draRequest(i int, pod string) api.AllocateRequest {
	return api.AllocateRequest{Sandbox: fmt.Sprintf("dra-sandbox-%d", i), CNIIfName: "eth0", Network: "net", Mode: api.ModeMove,
		Chained: true, PodNamespace: "default", PodName: pod}
}

// TestDRAGPUsPlaceTheirNICs: real ResourceSlices in a real API server and
// PodResources answers with dynamic resources give the pod's GPUs, hence
// the NICs closest to them; what cannot be resolved fails ADD loudly.
func TestDRAGPUsPlaceTheirNICs(t *testing.T) {
	s := kapi.Start(t)
	root := t.TempDir()
	spec, err := fakesys.Write(root, draMachine, fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, slice := range append(decoySlices(spec), nodeGPUSlice(spec)) {
		if _, err := s.Clients.Kube.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ResourceSlice %s: %v", slice.Name, err)
		}
	}
	const unknownMIG = "MIG-9d8c7b6a-5f4e-5d3c-8b2a-1f0e9d8c7b6a"
	pods := []kubeletstub.Pod{
		claimPod("dra-45", nil, "gpu-4", "gpu-5"),
		claimPod("mixed", []string{spec.GPUs[0].UUID}, "gpu-1"),
		claimPod("mig-dra", nil, "gpu-2-mig-19-0-1"),
		claimPod("mig-plugin", []string{draMIG}),
		claimPod("late", nil, "gpu-late"),
		claimPod("ghost", nil, "gpu-3", "gpu-9"),
		claimPod("mig-unknown", []string{unknownMIG}),
	}
	svc := draService(t, root, pods, startSlices(t, s.Clients, 3*time.Second))
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	affinity := m.Affinity()
	tests := []struct {
		pod      string
		wantGPUs []int
		wantCode uint
		wantText []string
		before   func(t *testing.T) // runs while Allocate waits
	}{
		{pod: "dra-45", wantGPUs: []int{4, 5}},
		{pod: "mixed", wantGPUs: []int{0, 1}},
		{pod: "mig-dra", wantGPUs: []int{2}},
		{pod: "mig-plugin", wantGPUs: []int{2}},
		{pod: "late", wantGPUs: []int{6}, before: func(t *testing.T) { publishLateSlice(t, s, spec) }},
		{pod: "ghost", wantCode: api.CodeInvalidConfig,
			wantText: []string{"gpu.nvidia.com/" + draNode + "/gpu-9", "default/ghost-gpus", "kubectl get resourceslices", "unresolvedGPUs: ignore"}},
		{pod: "mig-unknown", wantCode: api.CodeInvalidConfig, wantText: []string{unknownMIG, "rail.dev/gpus"}},
	}
	for i, tt := range tests {
		t.Run(tt.pod, func(t *testing.T) {
			done := make(chan struct{})
			var plan *api.Plan
			var err error
			go func() {
				defer close(done)
				plan, err = svc.Allocate(ctx, draRequest(i, tt.pod))
			}()
			if tt.before != nil {
				tt.before(t)
			}
			<-done
			if tt.wantCode != 0 {
				if !api.IsCode(err, tt.wantCode) {
					t.Fatalf("Allocate = %+v, %v; want code %d", plan, err, tt.wantCode)
				}
				for _, part := range tt.wantText {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not name %q", err, part)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Allocate: %v", err)
			}
			checkPlacedByGPUs(t, plan, tt.wantGPUs, affinity)
			// move mode: free the NICs for the next pod
			req := draRequest(i, tt.pod)
			if err := svc.Release(ctx, api.AttachmentRequest{Sandbox: req.Sandbox, CNIIfName: req.CNIIfName, Network: req.Network}); err != nil {
				t.Fatalf("Release: %v", err)
			}
		})
	}
}

// checkPlacedByGPUs: the plan's interfaces carry exactly the wanted GPUs,
// each on the NIC the node's affinity gives it.
func checkPlacedByGPUs(t *testing.T, plan *api.Plan, want []int, affinity map[int]string) {
	t.Helper()
	var got []int
	for _, iface := range plan.Interfaces {
		for _, g := range iface.GPUs {
			got = append(got, g)
			if iface.NIC == nil || iface.NIC.RDMADevice != affinity[g] {
				t.Errorf("GPU %d got %+v, want its closest NIC %s", g, iface.NIC, affinity[g])
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("plan GPUs = %v, want %v (plan %+v)", got, want, plan)
	}
}

// publishLateSlice adds, while an ADD waits for it, a slice with gpu-late (GPU 6).
func publishLateSlice(t *testing.T, s *kapi.Server, spec *fakesys.Spec) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // let the ADD look and wait first
	node := draNode
	late := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: draNode + "-late"},
		Spec: resourcev1.ResourceSliceSpec{Driver: draDriver, NodeName: &node, Pool: resourcev1.ResourcePool{Name: draNode, Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu-late", Attributes: draAttrs("uuid", spec.GPUs[6].UUID)}}}}
	if _, err := s.Clients.Kube.ResourceV1().ResourceSlices().Create(context.Background(), late, metav1.CreateOptions{}); err != nil {
		t.Errorf("create late ResourceSlice: %v", err)
	}
}

// TestDRASlicesUnreachableTryAgain: an API server raild cannot reach
// leaves the slices unsynced: ADD fails with code 11 and the reason.
func TestDRASlicesUnreachableTryAgain(t *testing.T) {
	s := kapi.Start(t)
	root := t.TempDir()
	if _, err := fakesys.Write(root, draMachine, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(s.Config)
	cfg.Host = "https://127.0.0.1:1"
	clients, err := kubeclient.New(cfg, "rail-dra-test")
	if err != nil {
		t.Fatal(err)
	}
	svc := draService(t, root, []kubeletstub.Pod{claimPod("dra-45", nil, "gpu-4")}, startSlices(t, clients, time.Second))
	_, err = svc.Allocate(context.Background(), draRequest(0, "dra-45"))
	if !api.IsCode(err, api.CodeTryAgainLater) {
		t.Fatalf("Allocate = %v; want code 11", err)
	}
	for _, part := range []string{"gpu.nvidia.com/" + draNode + "/gpu-4", "not listed yet", "connection refused"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %q", err, part)
		}
	}
}
