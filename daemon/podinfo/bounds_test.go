package podinfo_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
)

// ids is n device IDs made by format.
func ids(n int, format string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

func claimDevices(n int) []podinfotest.ClaimDevice {
	out := make([]podinfotest.ClaimDevice, n)
	for i := range out {
		out[i] = podinfotest.ClaimDevice{Driver: draDriver, Pool: "node-1", Device: fmt.Sprintf("gpu-%d", i)}
	}
	return out
}

func gpuContainer(name string, deviceIDs []string) podinfotest.Container {
	return podinfotest.Container{Name: name, Devices: map[string][]string{gpuResource: deviceIDs}}
}

// TestDeviceBounds: a kubelet answer with more devices than any node has
// GPUs (100k IDs from a broken device plugin) is refused whole, naming the
// pod, for the whole pod and per container, Get or List; nothing of it is
// handed on (no IDs, a short error) for a cache to keep. Devices of
// resources raild was not asked about do not count, and a pod at the
// bounds is read in full.
func TestDeviceBounds(t *testing.T) {
	wide := make([]podinfotest.Container, 5) // 5 × 250: each container within, the pod beyond
	for i := range wide {
		wide[i] = gpuContainer(fmt.Sprintf("c%d", i), ids(250, fmt.Sprintf("GPU-%d-%%d", i)))
	}
	pod := func(name string, containers ...podinfotest.Container) podinfotest.Pod {
		return podinfotest.Pod{Namespace: "default", Name: name, Containers: containers}
	}
	tests := []struct {
		pod     podinfotest.Pod
		want    []string // in the error; none: read in full
		wantIDs int
	}{
		{pod: pod("huge", gpuContainer("main", ids(100_000, "%d"))),
			want: []string{"pod default/huge container \"main\"", "100000 devices", "at most 256 per container"}},
		{pod: pod("huge-uuids", gpuContainer("main", ids(100_000, "GPU-8b3f1c2e-4d5a-11ee-be56-%012d"))), // beyond what raild reads of one Get
			want: []string{"default/huge-uuids"}},
		{pod: pod("wide", wide...), want: []string{"pod default/wide:", "1250 devices", "at most 1024 per pod"}},
		{pod: pod("claims", podinfotest.Container{Name: "main", Claims: []podinfotest.Claim{
			{Namespace: "default", Name: "all", Devices: claimDevices(podinfo.MaxDevicesPerContainer + 1)}}}),
			want: []string{"pod default/claims container \"main\"", "257 devices"}},
		{pod: pod("at-bound", gpuContainer("main", ids(podinfo.MaxDevicesPerContainer, "GPU-%d"))), wantIDs: podinfo.MaxDevicesPerContainer},
		{pod: pod("many-others", podinfotest.Container{Name: "main",
			Devices: map[string][]string{gpuResource: {"GPU-a"}, hcaResource: ids(20_000, "hca-%d")}}), wantIDs: 1},
	}
	socket := filepath.Join(t.TempDir(), "kubelet.sock")
	stub, err := podinfotest.Start(socket, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stub.Stop)
	client := podinfotest.Dial(t, socket)
	for _, tt := range tests {
		if err := stub.SetPods([]podinfotest.Pod{tt.pod}); err != nil { // alone: List answers with it only
			t.Fatal(err)
		}
		for _, mode := range []podinfotest.GetMode{podinfotest.GetServed, podinfotest.GetUnimplemented} {
			stub.SetGetMode(mode)
			t.Run(fmt.Sprintf("%s/mode%d", tt.pod.Name, mode), func(t *testing.T) {
				devices, podErr := client.PodGPUs(context.Background(), "default", tt.pod.Name, nil)
				byCtr, ctrErr := client.ContainerGPUs(context.Background(), "default", tt.pod.Name, nil)
				if len(tt.want) == 0 {
					if podErr != nil || ctrErr != nil {
						t.Fatalf("PodGPUs: %v; ContainerGPUs: %v; want both read", podErr, ctrErr)
					}
					if len(devices.IDs) != tt.wantIDs || len(byCtr["main"].IDs) != tt.wantIDs {
						t.Errorf("got %d IDs for the pod, %d for its container; want %d", len(devices.IDs), len(byCtr["main"].IDs), tt.wantIDs)
					}
					return
				}
				for call, err := range map[string]error{"PodGPUs": podErr, "ContainerGPUs": ctrErr} {
					if !errors.Is(err, podinfo.ErrTooManyDevices) {
						t.Fatalf("%s = %v; want ErrTooManyDevices", call, err)
					}
					for _, w := range tt.want {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("%s: %q: want %q in it", call, err, w)
						}
					}
					if len(err.Error()) > 1024 {
						t.Errorf("%s: a %d-byte error: it must not carry the answer", call, len(err.Error()))
					}
				}
				if !devices.Empty() || byCtr != nil {
					t.Errorf("refused answer handed on: %d IDs, %d containers", len(devices.IDs), len(byCtr))
				}
			})
		}
	}
}
