package draslices_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/daemon/podinfo"
)

// BenchmarkGPUID is one ADD's lookup of a DRA device: this node's slice
// of 8 GPUs among the slices of 63 other nodes (what the informer holds
// when the API server cannot filter by node).
func BenchmarkGPUID(b *testing.B) {
	var objs []runtime.Object
	for n := range 64 {
		var devices []resourcev1.Device
		for g := range 8 {
			devices = append(devices, device(fmt.Sprintf("gpu-%d", g), map[string]string{
				"uuid": fmt.Sprintf("GPU-%02d%02d", n, g), "pcieBusID": fmt.Sprintf("0000:%02x:00.0", 0x10+g)}))
		}
		name := fmt.Sprintf("node-%d", n)
		objs = append(objs, slice(name+"-gpu", gpuDriver, name, 1, devices, func(s *resourcev1.ResourceSliceSpec) { s.NodeName = &name }))
	}
	objs = append(objs, testSlices()...)
	s := start(b, fake.NewClientset(objs...), time.Second)
	dev := podinfo.DRADevice{Driver: gpuDriver, Pool: node, Device: "gpu-0"}
	if _, err := s.GPUID(context.Background(), dev); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.GPUID(context.Background(), dev); err != nil {
			b.Fatal(err)
		}
	}
}
