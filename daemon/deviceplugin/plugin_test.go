package deviceplugin

import (
	"slices"
	"testing"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/pkg/topology"
)

func TestRegisterListAndWatchAllocate(t *testing.T) {
	dir := t.TempDir()
	m := testMachine(t)
	k := startKubelet(t, dir)
	runPlugin(t, Config{Dir: dir, Count: 3, PerRail: true, PollInterval: "20ms"}, m)

	regs := k.registrations(t, 3)
	for name, endpoint := range map[string]string{
		"rail.dev/rdma": "rail.dev-rdma.sock", "rail.dev/rail0": "rail.dev-rail0.sock", "rail.dev/rail1": "rail.dev-rail1.sock",
	} {
		r, ok := regs[name]
		if !ok || r.Endpoint != endpoint || r.Version != pluginapi.Version {
			t.Fatalf("registration of %s: %+v", name, r)
		}
	}

	tests := []struct {
		endpoint string
		health   string
		paths    []string
	}{
		{"rail.dev-rdma.sock", pluginapi.Healthy, []string{"/dev/infiniband/uverbs0", "/dev/infiniband/uverbs1", "/dev/infiniband/rdma_cm"}},
		{"rail.dev-rail0.sock", pluginapi.Healthy, []string{"/dev/infiniband/uverbs0", "/dev/infiniband/rdma_cm"}},
		{"rail.dev-rail1.sock", pluginapi.Unhealthy, []string{"/dev/infiniband/uverbs1", "/dev/infiniband/rdma_cm"}},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			c := dial(t, dir, tt.endpoint)
			opts, err := c.GetDevicePluginOptions(t.Context(), &pluginapi.Empty{})
			if err != nil || opts.PreStartRequired || !opts.GetPreferredAllocationAvailable {
				t.Fatalf("options %+v, %v", opts, err)
			}
			stream, err := c.ListAndWatch(t.Context(), &pluginapi.Empty{})
			if err != nil {
				t.Fatal(err)
			}
			list, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Devices) != 3 || list.Devices[0].Health != tt.health {
				t.Fatalf("ListAndWatch: %v, want 3 devices %s", list.Devices, tt.health)
			}
			ids := []string{list.Devices[0].ID}
			resp, err := c.Allocate(t.Context(), &pluginapi.AllocateRequest{
				ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}}})
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, d := range resp.ContainerResponses[0].Devices {
				if d.HostPath != d.ContainerPath || d.Permissions != "rw" {
					t.Errorf("device spec %+v", d)
				}
				paths = append(paths, d.ContainerPath)
			}
			if !slices.Equal(paths, tt.paths) {
				t.Errorf("Allocate paths %v, want %v", paths, tt.paths)
			}
			if _, err := c.Allocate(t.Context(), &pluginapi.AllocateRequest{
				ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"other-0"}}}}); err == nil {
				t.Error("Allocate accepted a device ID it never listed")
			}
			pref, err := c.GetPreferredAllocation(t.Context(), &pluginapi.PreferredAllocationRequest{
				ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
					AvailableDeviceIDs:   []string{list.Devices[0].ID, list.Devices[1].ID, list.Devices[2].ID},
					MustIncludeDeviceIDs: []string{list.Devices[2].ID}, AllocationSize: 2}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := pref.ContainerResponses[0].DeviceIDs; !slices.Equal(got, []string{list.Devices[2].ID, list.Devices[0].ID}) {
				t.Errorf("preferred %v", got)
			}
			if _, err := c.PreStartContainer(t.Context(), &pluginapi.PreStartContainerRequest{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestReregistersAfterKubeletRestart: a restarted kubelet (new socket,
// plugin sockets wiped) gets every resource registered again, and the
// plugin serves on a fresh socket.
func TestReregistersAfterKubeletRestart(t *testing.T) {
	dir := t.TempDir()
	k := startKubelet(t, dir)
	runPlugin(t, Config{Dir: dir, PollInterval: "20ms"}, testMachine(t))
	k.registrations(t, 1)

	k2 := k.restart(t, dir)
	if r := k2.registrations(t, 1)["rail.dev/rdma"]; r == nil || r.Endpoint != "rail.dev-rdma.sock" {
		t.Fatalf("re-registration: %+v", r)
	}
	c := dialWhenUp(t, dir, "rail.dev-rdma.sock")
	if _, err := c.GetDevicePluginOptions(t.Context(), &pluginapi.Empty{}); err != nil {
		t.Fatalf("the plugin does not serve after the restart: %v", err)
	}
}

// TestRegistersWhenKubeletComesLater: no kubelet.sock at start is not an
// error; registration happens once it appears.
func TestRegistersWhenKubeletComesLater(t *testing.T) {
	dir := t.TempDir()
	runPlugin(t, Config{Dir: dir, PollInterval: "20ms"}, testMachine(t))
	dialWhenUp(t, dir, "rail.dev-rdma.sock")
	k := startKubelet(t, dir)
	k.registrations(t, 1)
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"relative dir", Config{Dir: "device-plugins"}},
		{"resource without domain", Config{ResourceName: "rdma"}},
		{"reserved domain", Config{ResourceName: "kubernetes.io/rdma"}},
		{"negative count", Config{Count: -1}},
		{"bad poll interval", Config{PollInterval: "often"}},
		{"bad rail prefix", Config{RailPrefix: "rail"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); err == nil {
				t.Fatal("accepted")
			}
			if err := New(Options{Config: tt.cfg, Machine: fixed(&topology.Machine{})}).Run(t.Context()); err == nil {
				t.Fatal("Run accepted a bad config")
			}
		})
	}
	err := New(Options{Config: Config{Dir: t.TempDir(), PerRail: true, Rails: []string{"mlx5_2"}}, Machine: fixed(testMachine(t))}).Run(t.Context())
	if err == nil {
		t.Fatal("a rail on a NIC without uverbs was accepted")
	}
}
