package deviceplugin

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
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

// testMachine: mlx5_0 (ACTIVE) and mlx5_1 (DOWN), rdma_cm, and mlx5_2
// without a uverbs node.
func testMachine(t *testing.T) *topology.Machine {
	t.Helper()
	m := &topology.Machine{Root: t.TempDir(), RdmaCM: &topology.CharDev{Name: "rdma_cm", Path: "/dev/infiniband/rdma_cm", Major: 10, Minor: 58}}
	for i, state := range []string{"ACTIVE", "DOWN"} {
		name := fmt.Sprintf("mlx5_%d", i)
		m.NICs = append(m.NICs, topology.NIC{
			Name:   name,
			State:  state,
			Uverbs: &topology.CharDev{Name: fmt.Sprintf("uverbs%d", i), Path: fmt.Sprintf("/dev/infiniband/uverbs%d", i), Major: 231, Minor: uint32(192 + i)},
			Ports: []topology.Port{{Num: 1, State: state, Umad: &topology.CharDev{Name: fmt.Sprintf("umad%d", i),
				Path: fmt.Sprintf("/dev/infiniband/umad%d", i), Major: 231, Minor: uint32(i)}}},
		})
	}
	m.NICs = append(m.NICs, topology.NIC{Name: "mlx5_2", Ports: []topology.Port{{Num: 1}}})
	return m
}

// fixed is a machine that never changes, as Options.Machine reads it.
func fixed(m *topology.Machine) func() *topology.Machine {
	return func() *topology.Machine { return m }
}

func runPlugin(t *testing.T, cfg Config, m *topology.Machine) *Plugin {
	t.Helper()
	return runLivePlugin(t, Options{Config: cfg, Machine: fixed(m)})
}

// runLivePlugin runs the plugin until the test ends.
func runLivePlugin(t *testing.T, opt Options) *Plugin {
	t.Helper()
	opt.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p := New(opt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return p
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
