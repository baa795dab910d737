package podinfotest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

func samplePods() []Pod {
	return []Pod{
		{Namespace: "default", Name: "prefill", Containers: []Container{
			{Name: "main", Devices: map[string][]string{"nvidia.com/gpu": {"GPU-a", "GPU-b"}, "rdma/hca": {"h0"}}},
		}},
		{Namespace: "default", Name: "decode", Containers: []Container{
			{Name: "main", Devices: map[string][]string{"nvidia.com/gpu": {"GPU-e"}}, Claims: []Claim{{Namespace: "default", Name: "gpus",
				Devices: []ClaimDevice{{Driver: "gpu.nvidia.com", Pool: "node-1", Device: "gpu-3", CDI: []string{"k8s.gpu.nvidia.com/device=gpu-3"}}}}}},
			{Name: "side", Devices: map[string][]string{"nvidia.com/gpu": {"GPU-f"}}},
		}},
	}
}

func startServer(t *testing.T, pods []Pod) (*Server, podresourcesapi.PodResourcesListerClient) {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "kubelet.sock")
	server, err := Start(socket, pods)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(server.Stop)
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return server, podresourcesapi.NewPodResourcesListerClient(conn)
}

// summary renders pods as "ns/name[container:resource=ids;...]" for comparison.
func summary(pods ...*podresourcesapi.PodResources) []string {
	var out []string
	for _, pod := range pods {
		var parts []string
		for _, container := range pod.GetContainers() {
			for _, devices := range container.GetDevices() {
				parts = append(parts, fmt.Sprintf("%s:%s=%s", container.GetName(), devices.GetResourceName(), strings.Join(devices.GetDeviceIds(), ",")))
			}
			for _, claim := range container.GetDynamicResources() {
				for _, dev := range claim.GetClaimResources() {
					parts = append(parts, fmt.Sprintf("%s:claim %s/%s=%s/%s/%s%s", container.GetName(), claim.GetClaimNamespace(), claim.GetClaimName(),
						dev.GetDriverName(), dev.GetPoolName(), dev.GetDeviceName(), cdiNames(dev.GetCdiDevices())))
				}
			}
		}
		out = append(out, fmt.Sprintf("%s/%s[%s]", pod.GetNamespace(), pod.GetName(), strings.Join(parts, ";")))
	}
	return out
}

func cdiNames(devices []*podresourcesapi.CDIDevice) string {
	names := make([]string, len(devices))
	for i, d := range devices {
		names[i] = d.GetName()
	}
	return "(" + strings.Join(names, ",") + ")"
}

func TestListAndGet(t *testing.T) {
	server, client := startServer(t, samplePods())
	ctx := context.Background()

	list, err := client.List(ctx, &podresourcesapi.ListPodResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wantList := []string{
		"default/prefill[main:nvidia.com/gpu=GPU-a,GPU-b;main:rdma/hca=h0]",
		"default/decode[main:nvidia.com/gpu=GPU-e;main:claim default/gpus=gpu.nvidia.com/node-1/gpu-3(k8s.gpu.nvidia.com/device=gpu-3);side:nvidia.com/gpu=GPU-f]",
	}
	if got := summary(list.GetPodResources()...); !slices.Equal(got, wantList) {
		t.Errorf("List = %q, want %q", got, wantList)
	}

	tests := []struct {
		namespace, name string
		want            string
		wantCode        codes.Code
	}{
		{"default", "decode", wantList[1], codes.OK},
		{"default", "prefill", wantList[0], codes.OK},
		{"default", "ghost", "", codes.NotFound},
		{"other", "prefill", "", codes.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.namespace+"/"+tt.name, func(t *testing.T) {
			resp, err := client.Get(ctx, &podresourcesapi.GetPodResourcesRequest{PodNamespace: tt.namespace, PodName: tt.name})
			if code := status.Code(err); code != tt.wantCode {
				t.Fatalf("Get code = %v (%v), want %v", code, err, tt.wantCode)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.name) {
					t.Errorf("error %q does not name the pod", err)
				}
				return
			}
			if got := summary(resp.GetPodResources()); got[0] != tt.want {
				t.Errorf("Get = %q, want %q", got[0], tt.want)
			}
		})
	}
	if calls := server.Calls(); calls.List != 1 || calls.Get != len(tests) {
		t.Errorf("Calls = %+v, want List 1, Get %d", calls, len(tests))
	}
}

func TestGetModes(t *testing.T) {
	server, client := startServer(t, samplePods())
	tests := []struct {
		mode     GetMode
		wantCode codes.Code
		wantMsg  string
	}{
		{GetServed, codes.OK, ""},
		{GetUnimplemented, codes.Unimplemented, "not implemented"},
		{GetDisabled, codes.Unknown, "Get method disabled"},
	}
	for _, tt := range tests {
		server.SetGetMode(tt.mode)
		_, err := client.Get(context.Background(), &podresourcesapi.GetPodResourcesRequest{PodNamespace: "default", PodName: "prefill"})
		if status.Code(err) != tt.wantCode || (err != nil && !strings.Contains(err.Error(), tt.wantMsg)) {
			t.Errorf("mode %d: Get error %v, want code %v with %q", tt.mode, err, tt.wantCode, tt.wantMsg)
		}
	}
}

func TestAllocatable(t *testing.T) {
	server, client := startServer(t, samplePods())
	get := func() []string {
		resp, err := client.GetAllocatableResources(context.Background(), &podresourcesapi.AllocatableResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, devices := range resp.GetDevices() {
			out = append(out, devices.GetResourceName()+"="+strings.Join(devices.GetDeviceIds(), ","))
		}
		return out
	}
	if got, want := get(), []string{"nvidia.com/gpu=GPU-a,GPU-b,GPU-e,GPU-f", "rdma/hca=h0"}; !slices.Equal(got, want) {
		t.Errorf("allocatable from pods = %q, want %q", got, want)
	}
	devices := map[string][]string{"nvidia.com/gpu": {"0", "1", "2"}}
	server.SetAllocatable(devices)
	devices["nvidia.com/gpu"][0] = "changed by caller"
	if got, want := get(), []string{"nvidia.com/gpu=0,1,2"}; !slices.Equal(got, want) {
		t.Errorf("allocatable set = %q, want %q", got, want)
	}
}

func TestSetPods(t *testing.T) {
	server, client := startServer(t, samplePods())
	listed := func() []string {
		resp, err := client.List(context.Background(), &podresourcesapi.ListPodResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return summary(resp.GetPodResources()...)
	}
	pods := []Pod{{Namespace: "ns", Name: "p", Containers: []Container{{Name: "c", Devices: map[string][]string{"r": {"1"}}}}}}
	if err := server.SetPods(pods); err != nil {
		t.Fatal(err)
	}
	pods[0].Containers[0].Devices["r"][0] = "changed by caller"
	want := []string{"ns/p[c:r=1]"}
	if got := listed(); !slices.Equal(got, want) {
		t.Fatalf("after SetPods: %q, want %q", got, want)
	}
	if err := server.SetPods([]Pod{{Namespace: "ns"}}); err == nil || !strings.Contains(err.Error(), "pods[0]") {
		t.Fatalf("SetPods(invalid) = %v, want an error naming pods[0]", err)
	}
	if got := listed(); !slices.Equal(got, want) {
		t.Errorf("invalid SetPods changed the pods: %q", got)
	}
	if err := server.SetPods(nil); err != nil || len(listed()) != 0 {
		t.Errorf("SetPods(nil) = %v, pods %q; want none", err, listed())
	}
}

func TestConcurrentSetPodsAndCalls(t *testing.T) {
	server, client := startServer(t, samplePods())
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 50 {
		wg.Go(func() {
			pods := samplePods()
			pods[0].Name = fmt.Sprintf("prefill-%d", i)
			errs <- server.SetPods(pods)
		})
		wg.Go(func() {
			_, err := client.List(context.Background(), &podresourcesapi.ListPodResourcesRequest{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestStartAndStopSocket(t *testing.T) {
	dir := t.TempDir()
	t.Run("creates directory, stop removes socket, stop twice", func(t *testing.T) {
		socket := filepath.Join(dir, "nested", "pod-resources", "kubelet.sock")
		server, err := Start(socket, nil)
		if err != nil {
			t.Fatal(err)
		}
		server.Stop()
		server.Stop()
		if _, err := os.Lstat(socket); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("socket still there after Stop: %v", err)
		}
	})
	t.Run("replaces a stale socket", func(t *testing.T) {
		socket := filepath.Join(dir, "stale.sock")
		listener, err := net.Listen("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		listener.(*net.UnixListener).SetUnlinkOnClose(false)
		_ = listener.Close()
		server, err := Start(socket, samplePods())
		if err != nil {
			t.Fatalf("Start over a stale socket: %v", err)
		}
		server.Stop()
	})
	refused := []struct {
		name    string
		prepare func(t *testing.T, socket string)
		pods    []Pod
		wantErr string
	}{
		{"invalid pods", func(*testing.T, string) {}, []Pod{{Name: "x"}}, "namespace and name"},
		{"regular file", func(t *testing.T, socket string) {
			if err := os.WriteFile(socket, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil, "not a socket"},
		{"socket in use", func(t *testing.T, socket string) {
			running, err := Start(socket, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(running.Stop)
		}, nil, "in use"},
		{"empty path", func(*testing.T, string) {}, nil, "socket path is empty"},
	}
	for i, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			socket := filepath.Join(dir, fmt.Sprintf("refused%d.sock", i))
			tt.prepare(t, socket)
			if tt.name == "empty path" {
				socket = ""
			}
			server, err := Start(socket, tt.pods)
			if err == nil {
				server.Stop()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}
