package podinfo_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
)

const (
	gpuResource = "nvidia.com/gpu"
	migResource = "nvidia.com/mig-1g.10gb"
	hcaResource = "rdma/hca"
	draDriver   = "gpu.nvidia.com"
	nicDriver   = "dra.net"
)

func testPods() []podinfotest.Pod {
	return []podinfotest.Pod{
		{Namespace: "default", Name: "prefill", Containers: []podinfotest.Container{
			{Name: "main", Devices: map[string][]string{gpuResource: {"GPU-a", "GPU-b"}}},
			{Name: "sidecar"},
		}},
		{Namespace: "other", Name: "prefill", Containers: []podinfotest.Container{
			{Name: "main", Devices: map[string][]string{gpuResource: {"GPU-c"}}},
		}},
		{Namespace: "default", Name: "multi", Containers: []podinfotest.Container{
			{Name: "c1", Devices: map[string][]string{gpuResource: {"0"}}},
			{Name: "c2", Devices: map[string][]string{gpuResource: {"1", "0"}, hcaResource: {"hca-x"}}},
			{Name: "c3", Devices: map[string][]string{migResource: {"MIG-m"}}},
		}},
		{Namespace: "default", Name: "cpu-only", Containers: []podinfotest.Container{{Name: "main"}}},
		{Namespace: "default", Name: "dra", Containers: []podinfotest.Container{
			{Name: "trainer", Devices: map[string][]string{gpuResource: {"GPU-a"}}, Claims: []podinfotest.Claim{
				{Namespace: "default", Name: "two-gpus", Devices: []podinfotest.ClaimDevice{
					{Driver: draDriver, Pool: "node-1", Device: "gpu-0", CDI: []string{"k8s.gpu.nvidia.com/device=gpu-0"}},
					{Driver: draDriver, Pool: "node-1", Device: "gpu-1"}}},
				{Namespace: "default", Name: "nic", Devices: []podinfotest.ClaimDevice{{Driver: nicDriver, Pool: "node-1", Device: "eth1"}}}}},
			{Name: "helper", Claims: []podinfotest.Claim{ // shares the claim: its devices count once for the pod
				{Namespace: "default", Name: "two-gpus", Devices: []podinfotest.ClaimDevice{{Driver: draDriver, Pool: "node-1", Device: "gpu-1"}}}}},
			{Name: "idle"},
		}},
	}
}

func startStub(t *testing.T, socket string) *podinfotest.Server {
	t.Helper()
	stub, err := podinfotest.Start(socket, testPods())
	if err != nil {
		t.Fatalf("start kubelet stub: %v", err)
	}
	t.Cleanup(stub.Stop)
	return stub
}

func TestPodDevices(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "kubelet.sock")
	stub := startStub(t, socket)
	client := podinfotest.Dial(t, socket)

	tests := []struct {
		name          string
		namespace     string
		pod           string
		resources     []string
		want          []string
		wantNotFound  bool
		wantErrSubstr string
	}{
		{name: "default resource", namespace: "default", pod: "prefill", want: []string{"GPU-a", "GPU-b"}},
		{name: "same name other namespace", namespace: "other", pod: "prefill", want: []string{"GPU-c"}},
		{name: "several containers, each id once", namespace: "default", pod: "multi", want: []string{"0", "1"}},
		{name: "several resource names", namespace: "default", pod: "multi", resources: []string{gpuResource, migResource}, want: []string{"0", "1", "MIG-m"}},
		{name: "other resource only", namespace: "default", pod: "multi", resources: []string{hcaResource}, want: []string{"hca-x"}},
		{name: "pod without devices", namespace: "default", pod: "cpu-only", want: nil},
		{name: "pod not found", namespace: "default", pod: "ghost", wantNotFound: true, wantErrSubstr: "default/ghost"},
		{name: "empty name", namespace: "default", pod: "", wantErrSubstr: "name"},
		{name: "empty namespace", namespace: "", pod: "prefill", wantErrSubstr: "namespace"},
	}
	modes := []struct {
		name     string
		mode     podinfotest.GetMode
		usesList bool
	}{
		{"get served", podinfotest.GetServed, false},
		{"get unimplemented", podinfotest.GetUnimplemented, true},
		{"get gate disabled", podinfotest.GetDisabled, true},
	}
	for _, mode := range modes {
		stub.SetGetMode(mode.mode)
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				before := stub.Calls()
				got, err := client.PodDevices(context.Background(), tt.namespace, tt.pod, tt.resources)
				if tt.wantErrSubstr != "" {
					if err == nil {
						t.Fatalf("PodDevices = %q, want an error", got)
					}
					if !strings.Contains(err.Error(), tt.wantErrSubstr) {
						t.Errorf("error %q does not contain %q", err, tt.wantErrSubstr)
					}
					if errors.Is(err, podinfo.ErrPodNotFound) != tt.wantNotFound {
						t.Errorf("errors.Is(%v, ErrPodNotFound) = %v, want %v", err, !tt.wantNotFound, tt.wantNotFound)
					}
					return
				}
				if err != nil {
					t.Fatalf("PodDevices: %v", err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("PodDevices = %q, want %q", got, tt.want)
				}
				after := stub.Calls()
				if listed := after.List > before.List; listed != mode.usesList {
					t.Errorf("List called: %v, want %v (calls before %+v, after %+v)", listed, mode.usesList, before, after)
				}
			})
		}
	}
}

func TestPodDevicesKubeletDown(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "kubelet.sock")
	client := podinfotest.Dial(t, socket)
	_, err := client.PodDevices(context.Background(), "default", "prefill", nil)
	if err == nil {
		t.Fatal("PodDevices with no kubelet succeeded")
	}
	if !errors.Is(err, podinfo.ErrKubeletUnreachable) {
		t.Errorf("error %v does not wrap ErrKubeletUnreachable", err)
	}
	for _, part := range []string{socket, "GPUs fall back to the rail.dev/gpus annotation"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not contain %q", err, part)
		}
	}
}

// TestPodDevicesKubeletComesLater: a client made before the kubelet is up,
// or across a kubelet restart, finds it without being made again.
func TestPodDevicesKubeletComesLater(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "kubelet.sock")
	client := podinfotest.Dial(t, socket)
	if _, err := client.PodDevices(context.Background(), "default", "prefill", nil); !errors.Is(err, podinfo.ErrKubeletUnreachable) {
		t.Fatalf("before the kubelet: err = %v, want ErrKubeletUnreachable", err)
	}
	first := startStub(t, socket)
	waitForDevices(t, client, []string{"GPU-a", "GPU-b"})

	first.Stop()
	second := startStub(t, socket)
	if err := second.SetPods([]podinfotest.Pod{{Namespace: "default", Name: "prefill", Containers: []podinfotest.Container{
		{Name: "main", Devices: map[string][]string{gpuResource: {"GPU-z"}}},
	}}}); err != nil {
		t.Fatal(err)
	}
	waitForDevices(t, client, []string{"GPU-z"})
}

func waitForDevices(t *testing.T, client *podinfo.Client, want []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := client.PodDevices(context.Background(), "default", "prefill", nil)
		if err == nil && slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PodDevices = %q, %v; want %q", got, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestDialRefusesBadInput(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		socket  string
		wantErr string
	}{
		{"empty socket", context.Background(), "", "socket path is empty"},
		{"cancelled", cancelled, "/nonexistent/kubelet.sock", "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, err := podinfo.Dial(tt.ctx, tt.socket, 0)
			if err == nil {
				_ = client.Close()
				t.Fatal("Dial succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestDialDefaultsAndAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	client, err := podinfo.Dial(context.Background(), "kubelet.sock", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if want := filepath.Join(dir, "kubelet.sock"); client.Socket() != want {
		t.Errorf("Socket() = %q, want %q", client.Socket(), want)
	}
}

func BenchmarkPodDevices(b *testing.B) {
	_, client := podinfotest.Kubelet(b, testPods())
	for b.Loop() {
		if _, err := client.PodDevices(context.Background(), "default", "multi", nil); err != nil {
			b.Fatal(err)
		}
	}
}
