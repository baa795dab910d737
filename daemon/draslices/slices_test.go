package draslices_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/railcni/rail/daemon/draslices"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/podinfo"
)

const (
	node      = "node-a"
	gpuDriver = "gpu.nvidia.com"
)

func str(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }

func device(name string, attrs map[string]string) resourcev1.Device {
	d := resourcev1.Device{Name: name, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}}
	for k, v := range attrs {
		d.Attributes[resourcev1.QualifiedName(k)] = str(v)
	}
	return d
}

// slice builds a ResourceSlice; tweak sets what the test is about.
func slice(name, driver, pool string, gen int64, devices []resourcev1.Device, tweak func(*resourcev1.ResourceSliceSpec)) *resourcev1.ResourceSlice {
	n := node
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{Driver: driver, NodeName: &n, Devices: devices,
			Pool: resourcev1.ResourcePool{Name: pool, Generation: gen, ResourceSliceCount: 1}}}
	if tweak != nil {
		tweak(&s.Spec)
	}
	return s
}

func otherNode(s *resourcev1.ResourceSliceSpec) { n := "node-b"; s.NodeName = &n }
func allNodes(s *resourcev1.ResourceSliceSpec)  { t := true; s.NodeName = nil; s.AllNodes = &t }

func testSlices() []runtime.Object {
	return []runtime.Object{
		slice("a-old", gpuDriver, node, 1, []resourcev1.Device{device("gpu-0", map[string]string{"uuid": "GPU-stale"})}, nil),
		slice("a-gpus", gpuDriver, node, 2, []resourcev1.Device{
			device("gpu-0", map[string]string{"uuid": "GPU-0000", "pcieBusID": "0000:17:00.0"}),
			device("gpu-1", map[string]string{"uuid": "GPU-1111"}),
			device("gpu-2", map[string]string{"gpu.nvidia.com/pciBusID": "00000000:3A:00.0"}),
			device("gpu-0-mig-9-0-1", map[string]string{"uuid": "MIG-aaaa", "parentUUID": "GPU-0000"}),
			device("gpu-odd", map[string]string{"productName": "no id"}),
		}, nil),
		slice("b-gpus", gpuDriver, "node-b", 1, []resourcev1.Device{device("gpu-5", map[string]string{"uuid": "GPU-5555"})}, otherNode),
		slice("fabric", gpuDriver, "fabric", 1, []resourcev1.Device{device("gpu-7", map[string]string{"uuid": "GPU-7777"})}, allNodes),
		slice("a-nics", "dra.net", node, 1, []resourcev1.Device{device("eth1", map[string]string{"pciBusID": "0000:18:00.0"})}, nil),
	}
}

func start(t testing.TB, client *fake.Clientset, wait time.Duration) *draslices.Slices {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := draslices.Start(ctx, &kubeclient.Clients{Kube: client, Watch: client}, draslices.Options{Node: node, Wait: wait})
	if err != nil || s == nil {
		t.Fatalf("Start = %v, %v", s, err)
	}
	return s
}

func TestGPUID(t *testing.T) {
	s := start(t, fake.NewClientset(testSlices()...), 200*time.Millisecond)
	dev := func(driver, pool, name string) podinfo.DRADevice {
		return podinfo.DRADevice{Driver: driver, Pool: pool, Device: name, Claim: "default/gpus"}
	}
	tests := []struct {
		name    string
		dev     podinfo.DRADevice
		want    string
		wantErr error    // nil: any error, when wantMsg is set
		wantMsg []string // parts of the error
	}{
		{name: "PCI bus ID before UUID", dev: dev(gpuDriver, node, "gpu-0"), want: "0000:17:00.0"},
		{name: "UUID alone", dev: dev(gpuDriver, node, "gpu-1"), want: "GPU-1111"},
		{name: "qualified attribute", dev: dev(gpuDriver, node, "gpu-2"), want: "00000000:3A:00.0"},
		{name: "MIG device: its parent", dev: dev(gpuDriver, node, "gpu-0-mig-9-0-1"), want: "GPU-0000"},
		{name: "no identifying attribute", dev: dev(gpuDriver, node, "gpu-odd"), wantMsg: []string{"gpu-odd", "PCI bus ID or UUID"}},
		{name: "device not listed", dev: dev(gpuDriver, node, "gpu-9"), wantErr: podinfo.ErrDRAUnknownDevice,
			wantMsg: []string{"gpu.nvidia.com/node-a/gpu-9", "default/gpus", "kubectl get resourceslices"}},
		{name: "other node's slice ignored", dev: dev(gpuDriver, "node-b", "gpu-5"), wantErr: podinfo.ErrDRAUnknownDevice},
		{name: "all-nodes slice ignored", dev: dev(gpuDriver, "fabric", "gpu-7"), wantErr: podinfo.ErrDRAUnknownDevice},
		{name: "not a GPU driver", dev: dev("dra.net", node, "eth1"), wantMsg: []string{"dra.net", "not a GPU driver"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.GPUID(context.Background(), tt.dev)
			if len(tt.wantMsg) == 0 && tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Fatalf("GPUID = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("GPUID = %q; want an error", got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			for _, part := range tt.wantMsg {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not name %q", err, part)
				}
			}
		})
	}
	if got := s.MIGParents(); len(got) != 1 || got["MIG-aaaa"] != "GPU-0000" {
		t.Errorf("MIGParents = %v", got)
	}
}

// TestGPUIDWaitsForANewSlice: a device published while the lookup waits is found.
func TestGPUIDWaitsForANewSlice(t *testing.T) {
	client := fake.NewClientset()
	s := start(t, client, 10*time.Second)
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.GPUID(short, podinfo.DRADevice{Driver: gpuDriver, Pool: node, Device: "warmup"}); err == nil {
		t.Fatal("found a device in no slice")
	}
	found := make(chan error, 1)
	go func() {
		id, err := s.GPUID(context.Background(), podinfo.DRADevice{Driver: gpuDriver, Pool: node, Device: "gpu-3"})
		if err == nil && id != "GPU-3333" {
			err = errors.New("wrong id " + id)
		}
		found <- err
	}()
	add := slice("late", gpuDriver, node, 1, []resourcev1.Device{device("gpu-3", map[string]string{"uuid": "GPU-3333"})}, nil)
	if _, err := client.ResourceV1().ResourceSlices().Create(context.Background(), add, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-found; err != nil {
		t.Fatalf("GPUID of a slice added while waiting: %v", err)
	}
}

// TestGPUIDNotSynced: with the list failing, a lookup says to try again
// later and why.
func TestGPUIDNotSynced(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "resourceslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("resourceslices is forbidden: no RBAC")
	})
	s := start(t, client, 300*time.Millisecond)
	_, err := s.GPUID(context.Background(), podinfo.DRADevice{Driver: gpuDriver, Pool: node, Device: "gpu-0"})
	if !errors.Is(err, podinfo.ErrDRANotSynced) {
		t.Fatalf("GPUID = %v; want ErrDRANotSynced", err)
	}
	for _, part := range []string{"gpu.nvidia.com/node-a/gpu-0", "node-a", "RBAC"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %q", err, part)
		}
	}
	if s.Synced() {
		t.Error("Synced with a failing list")
	}
}

// TestStartDoesNotWaitForTheAPIServer: raild's start does not hang on an
// API server that does not answer (the list is held until Start returned).
func TestStartDoesNotWaitForTheAPIServer(t *testing.T) {
	client := fake.NewClientset(testSlices()...)
	release := make(chan struct{})
	client.PrependReactor("list", "resourceslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release
		return false, nil, nil
	})
	s := start(t, client, 10*time.Second)
	close(release)
	if id, err := s.GPUID(context.Background(), podinfo.DRADevice{Driver: gpuDriver, Pool: node, Device: "gpu-1"}); err != nil || id != "GPU-1111" {
		t.Fatalf("GPUID once the API server answered = %q, %v; want GPU-1111", id, err)
	}
}

func TestStart(t *testing.T) {
	if s, err := draslices.Start(context.Background(), nil, draslices.Options{Node: node}); s != nil || err != nil {
		t.Errorf("Start(nil clients) = %v, %v; want DRA off", s, err)
	}
	_, err := draslices.Start(context.Background(), func() *kubeclient.Clients { c := fake.NewClientset(); return &kubeclient.Clients{Kube: c, Watch: c} }(), draslices.Options{})
	if err == nil || !strings.Contains(err.Error(), "nodeName") {
		t.Errorf("Start without a node = %v; want an error naming nodeName", err)
	}
}
