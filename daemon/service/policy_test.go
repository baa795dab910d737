package service

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/api"
)

// failingPods is a kubelet whose PodResources cannot be read.
type failingPods struct{}

func (failingPods) PodGPUs(context.Context, string, string, []string) (podinfo.Devices, error) {
	return podinfo.Devices{}, errors.New("connection refused")
}

func TestAttachPolicy(t *testing.T) {
	gpuPod := fakePods{"default/pod-gpu": {"0", "1"}}
	tests := []struct {
		name        string
		policy      api.AttachPolicy
		pods        podGPUs
		podName     string
		annotations map[string]string
		args        *api.CNIArgs
		chained     bool
		want        string // "attach", "pass", or an error fragment
	}{
		{name: "default: gpu pod attaches", pods: gpuPod, podName: "gpu", chained: true, want: "attach"},
		{name: "default: plain pod passes", pods: gpuPod, podName: "web", chained: true, want: "pass"},
		{name: "default: no kubelet, plain pod passes", podName: "web", chained: true, want: "pass"},
		{name: "default: annotated pod attaches", podName: "web", chained: true,
			annotations: map[string]string{api.AnnotationAttach: "true"}, want: "attach"},
		{name: "default: pool annotation asks", podName: "web", chained: true,
			annotations: map[string]string{api.AnnotationPool: "rail"}, want: "attach"},
		{name: "default: gpus annotation asks", podName: "web", chained: true,
			annotations: map[string]string{api.AnnotationGPUs: "2"}, want: "attach"},
		{name: "default: cni-args ask", podName: "web", chained: true, args: &api.CNIArgs{Pool: "rail"}, want: "attach"},
		{name: "gpu pod opts out", pods: gpuPod, podName: "gpu", chained: true,
			annotations: map[string]string{api.AnnotationAttach: "false"}, want: "pass"},
		{name: "opt-out beats gpus annotation", podName: "web", chained: true,
			annotations: map[string]string{api.AnnotationAttach: "false", api.AnnotationGPUs: "0"}, want: "pass"},
		{name: "bad attach value", podName: "web", chained: true,
			annotations: map[string]string{api.AnnotationAttach: "yes"}, want: `use "true" or "false"`},
		{name: "kubelet down: cannot tell, try again", pods: failingPods{}, podName: "web", chained: true, want: "kubelet"},
		{name: "annotated policy: gpu pod passes", policy: api.PolicyAnnotated, pods: gpuPod, podName: "gpu", chained: true, want: "pass"},
		{name: "annotated policy: annotated pod attaches", policy: api.PolicyAnnotated, podName: "web", chained: true,
			annotations: map[string]string{api.AnnotationAttach: "true"}, want: "attach"},
		{name: "all: plain pod attaches", policy: api.PolicyAll, podName: "web", chained: true, want: "attach"},
		{name: "all: opt-out passes", policy: api.PolicyAll, podName: "web", chained: true,
			annotations: map[string]string{api.AnnotationAttach: "false"}, want: "pass"},
		{name: "alone (Multus NAD): always attaches", podName: "web", chained: false, want: "attach"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(t, "h100x8-cx7x4", onePool(), tt.pods, func(o *Options) { o.Policy = tt.policy })
			req := allocReq("s1", "")
			req.PodName, req.Annotations, req.CNIArgs, req.Chained = "pod-"+tt.podName, tt.annotations, tt.args, tt.chained
			if !tt.chained {
				req.CNIIfName = "net1"
			}
			plan, err := svc.Allocate(context.Background(), req)
			switch tt.want {
			case "attach":
				if err != nil || plan.PassThrough || len(plan.Interfaces) == 0 {
					t.Fatalf("want interfaces, got %+v, %v", plan, err)
				}
			case "pass":
				if err != nil || !plan.PassThrough || len(plan.Interfaces) != 0 || plan.Reason == "" {
					t.Fatalf("want a pass-through with a reason, got %+v, %v", plan, err)
				}
				if leases := svc.Leases(); len(leases) != 0 {
					t.Fatalf("a pass-through recorded leases: %+v", leases)
				}
				if _, err := svc.Check(context.Background(), api.AttachmentRequest{Sandbox: "s1", CNIIfName: req.CNIIfName, Network: "net"}); !api.IsCode(err, api.CodeUnknownContainer) {
					t.Fatalf("check after pass-through = %v, want unknown container", err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("got %+v, %v; want an error with %q", plan, err, tt.want)
				}
				if len(svc.Leases()) != 0 {
					t.Fatalf("a failed allocation recorded leases")
				}
			}
		})
	}
}

// TestTwoNetworksOnePrefix: two chained rail networks in one pod with the
// same ifPrefix are a configuration error (code 7) naming ifPrefix, and the
// first network's lease is untouched.
func TestTwoNetworksOnePrefix(t *testing.T) {
	svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil)
	first := allocReq("s1", "0")
	if _, err := svc.Allocate(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	second := allocReq("s1", "0")
	second.Network = "other"
	second.Annotations = map[string]string{api.AnnotationAttach: "true"}
	second.Selector.NICs = []string{"mlx5_2"}
	_, err := svc.Allocate(context.Background(), second)
	if !api.IsCode(err, api.CodeInvalidConfig) || !strings.Contains(err.Error(), "ifPrefix") {
		t.Fatalf("second network: %v, want code 7 naming ifPrefix", err)
	}
	if leases := svc.Leases(); len(leases) != 1 || leases[0].Network != "net" {
		t.Fatalf("leases = %+v, want the first network's only", leases)
	}
}
