package deviceplugin

import (
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/daemon/metrics"
)

// TestCallsAreCountedAndTimed: each kubelet call counts once under its
// result and is timed; an Allocate naming a device the resource does not
// have counts as an error; a ListAndWatch stream counts each list it sends.
func TestCallsAreCountedAndTimed(t *testing.T) {
	dir := t.TempDir()
	m := metrics.New()
	runLivePlugin(t, Options{Config: Config{Dir: dir, PollInterval: "20ms"}, Machine: fixed(testMachine(t)), Calls: m.DevicePlugin})
	c := dialWhenUp(t, dir, "rail.dev-rdma.sock")
	ctx := t.Context()
	if _, err := c.GetDevicePluginOptions(ctx, &pluginapi.Empty{}); err != nil {
		t.Fatal(err)
	}
	stream, err := c.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := stream.Recv()
	if err != nil || len(list.Devices) == 0 {
		t.Fatalf("ListAndWatch: %v, %v", list, err)
	}
	good := &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{list.Devices[0].ID}}}}
	if _, err := c.Allocate(ctx, good); err != nil {
		t.Fatal(err)
	}
	bad := &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"no-such-device"}}}}
	if _, err := c.Allocate(ctx, bad); err == nil {
		t.Fatal("Allocate of an unknown device succeeded")
	}
	pref := &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
		AvailableDeviceIDs: []string{list.Devices[0].ID}, AllocationSize: 1}}}
	if _, err := c.GetPreferredAllocation(ctx, pref); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PreStartContainer(ctx, &pluginapi.PreStartContainerRequest{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		call string
		want metrics.Tally
	}{
		{callOptions, metrics.Tally{OK: 1, Timed: 1}},
		{callList, metrics.Tally{OK: 1, Timed: 1}},
		{callAllocate, metrics.Tally{OK: 1, Failed: 1, Timed: 2}},
		{callPreferred, metrics.Tally{OK: 1, Timed: 1}},
		{callPreStart, metrics.Tally{OK: 1, Timed: 1}},
	}
	// the stream's send is counted after it went out: wait for it
	deadline := time.Now().Add(20 * time.Second)
	for m.DevicePlugin.Tally(callList).OK == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for _, tt := range tests {
		if got := m.DevicePlugin.Tally(tt.call); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.call, got, tt.want)
		}
	}
}
