package deviceplugin

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/pkg/topology"
)

// fakeKubelet is kubelet's Registration service on <dir>/kubelet.sock.
type fakeKubelet struct {
	pluginapi.UnimplementedRegistrationServer
	srv  *grpc.Server
	reqs chan *pluginapi.RegisterRequest
}

func startKubelet(t *testing.T, dir string) *fakeKubelet {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(dir, "kubelet.sock"))
	if err != nil {
		t.Fatal(err)
	}
	k := &fakeKubelet{srv: grpc.NewServer(), reqs: make(chan *pluginapi.RegisterRequest, 16)}
	pluginapi.RegisterRegistrationServer(k.srv, k)
	go func() { _ = k.srv.Serve(ln) }()
	t.Cleanup(k.srv.Stop)
	return k
}

func (k *fakeKubelet) Register(_ context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	k.reqs <- req
	return &pluginapi.Empty{}, nil
}

// restart stops the kubelet and, as kubelet does on start, removes every
// socket in the directory before listening again.
func (k *fakeKubelet) restart(t *testing.T, dir string) *fakeKubelet {
	t.Helper()
	k.srv.Stop()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	return startKubelet(t, dir)
}

// registrations collects n Register calls (the deadline only stops a
// broken test from hanging).
func (k *fakeKubelet) registrations(t *testing.T, n int) map[string]*pluginapi.RegisterRequest {
	t.Helper()
	out := map[string]*pluginapi.RegisterRequest{}
	for len(out) < n {
		select {
		case r := <-k.reqs:
			out[r.ResourceName] = r
		case <-time.After(20 * time.Second):
			t.Fatalf("got %d registrations, want %d", len(out), n)
		}
	}
	return out
}

// testMachine: mlx5_0 (ACTIVE) and mlx5_1 (DOWN), their port state files
// under root, rdma_cm, and mlx5_2 without a uverbs node.
func testMachine(t *testing.T) *topology.Machine {
	t.Helper()
	root := t.TempDir()
	m := &topology.Machine{Root: root, RdmaCM: &topology.CharDev{Name: "rdma_cm", Path: "/dev/infiniband/rdma_cm", Major: 10, Minor: 58}}
	for i, state := range []string{"4: ACTIVE", "1: DOWN"} {
		name := fmt.Sprintf("mlx5_%d", i)
		m.NICs = append(m.NICs, topology.NIC{
			Name:   name,
			Uverbs: &topology.CharDev{Name: fmt.Sprintf("uverbs%d", i), Path: fmt.Sprintf("/dev/infiniband/uverbs%d", i), Major: 231, Minor: uint32(192 + i)},
			Ports: []topology.Port{{Num: 1, Umad: &topology.CharDev{Name: fmt.Sprintf("umad%d", i),
				Path: fmt.Sprintf("/dev/infiniband/umad%d", i), Major: 231, Minor: uint32(i)}}},
		})
		setPortState(t, root, name, state)
	}
	m.NICs = append(m.NICs, topology.NIC{Name: "mlx5_2", Ports: []topology.Port{{Num: 1}}})
	return m
}

func setPortState(t *testing.T, root, nic, state string) {
	t.Helper()
	dir := filepath.Join(root, "sys/class/infiniband", nic, "ports/1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Write then rename, so a concurrent reader never sees an empty file.
	tmp := filepath.Join(dir, ".state")
	if err := os.WriteFile(tmp, []byte(state+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
}

func runPlugin(t *testing.T, cfg Config, m *topology.Machine) {
	t.Helper()
	p := New(cfg, m, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func dial(t *testing.T, dir, endpoint string) pluginapi.DevicePluginClient {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, endpoint), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pluginapi.NewDevicePluginClient(conn)
}

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

// TestHealthFollowsPortState: ListAndWatch sends a new list when a port
// goes down and comes back.
func TestHealthFollowsPortState(t *testing.T) {
	dir := t.TempDir()
	m := testMachine(t)
	startKubelet(t, dir)
	runPlugin(t, Config{Dir: dir, Count: 2, PerRail: true, Rails: []string{"mlx5_0"}, PollInterval: "20ms"}, m)
	c := dialWhenUp(t, dir, "rail.dev-rail0.sock")
	stream, err := c.ListAndWatch(t.Context(), &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ state, want string }{
		{"", pluginapi.Healthy},
		{"1: DOWN", pluginapi.Unhealthy},
		{"4: ACTIVE", pluginapi.Healthy},
	} {
		if step.state != "" {
			setPortState(t, m.Root, "mlx5_0", step.state)
		}
		list, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range list.Devices {
			if d.Health != step.want {
				t.Fatalf("after %q: device %s is %s, want %s", step.state, d.ID, d.Health, step.want)
			}
		}
	}
}

// dialWhenUp waits for the plugin's socket to accept connections (the file
// appears at bind, before listen), then dials it.
func dialWhenUp(t *testing.T, dir, endpoint string) pluginapi.DevicePluginClient {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("unix", filepath.Join(dir, endpoint)); err == nil {
			c.Close()
			return dial(t, dir, endpoint)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", endpoint)
		}
		time.Sleep(10 * time.Millisecond)
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
			if err := New(tt.cfg, &topology.Machine{}, nil).Run(t.Context()); err == nil {
				t.Fatal("Run accepted a bad config")
			}
		})
	}
	err := New(Config{Dir: t.TempDir(), PerRail: true, Rails: []string{"mlx5_2"}}, testMachine(t), nil).Run(t.Context())
	if err == nil {
		t.Fatal("a rail on a NIC without uverbs was accepted")
	}
}
