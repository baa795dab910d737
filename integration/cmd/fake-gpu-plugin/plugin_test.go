package main

import (
	"context"
	"io"
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
)

// registry stands in for the kubelet's Registration service.
type registry struct {
	pluginapi.UnimplementedRegistrationServer
	got chan *pluginapi.RegisterRequest
}

func (r *registry) Register(_ context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	r.got <- req
	return &pluginapi.Empty{}, nil
}

func startRegistry(t *testing.T, dir string) *registry {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(dir, "kubelet.sock"))
	if err != nil {
		t.Fatal(err)
	}
	r := &registry{got: make(chan *pluginapi.RegisterRequest, 4)}
	srv := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(srv, r)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

func (r *registry) next(t *testing.T) *pluginapi.RegisterRequest {
	t.Helper()
	select {
	case req := <-r.got:
		return req
	case <-time.After(10 * time.Second):
		t.Fatal("the plugin did not register")
		return nil
	}
}

func TestPlugin(t *testing.T) {
	dir, err := os.MkdirTemp("", "fgp") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	reg := startRegistry(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	p := newPlugin(options{resource: "nvidia.com/gpu", count: 3, dir: dir, poll: 20 * time.Millisecond},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan error, 1)
	go func() { done <- p.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	req := reg.next(t)
	if req.ResourceName != "nvidia.com/gpu" || req.Endpoint != "fake-nvidia-com-gpu.sock" || req.Version != pluginapi.Version {
		t.Fatalf("registration %+v", req)
	}
	client := dial(t, filepath.Join(dir, req.Endpoint))
	stream, err := client.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range resp.Devices {
		if d.Health != pluginapi.Healthy {
			t.Errorf("device %s is %s", d.ID, d.Health)
		}
		ids = append(ids, d.ID)
	}
	want := []string{"GPU-00000000-0000-0000-0000-000000000000", "GPU-00000000-0000-0000-0000-000000000001",
		"GPU-00000000-0000-0000-0000-000000000002"}
	if len(ids) != len(want) || ids[0] != want[0] || ids[2] != want[2] {
		t.Errorf("devices %v, want %v", ids, want)
	}

	tests := []struct {
		name string
		ids  [][]string
		env  []string
	}{
		{"one container, two GPUs", [][]string{{want[0], want[1]}}, []string{want[0] + "," + want[1]}},
		{"two containers", [][]string{{want[2]}, {want[0]}}, []string{want[2], want[0]}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &pluginapi.AllocateRequest{}
			for _, ids := range tc.ids {
				req.ContainerRequests = append(req.ContainerRequests, &pluginapi.ContainerAllocateRequest{DevicesIds: ids})
			}
			resp, err := client.Allocate(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range resp.ContainerResponses {
				if got := c.Envs["NVIDIA_VISIBLE_DEVICES"]; got != tc.env[i] {
					t.Errorf("container %d: NVIDIA_VISIBLE_DEVICES=%q, want %q", i, got, tc.env[i])
				}
			}
		})
	}

	t.Run("registers again after the kubelet wiped its socket", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, req.Endpoint)); err != nil {
			t.Fatal(err)
		}
		if again := reg.next(t); again.Endpoint != req.Endpoint {
			t.Errorf("re-registration %+v", again)
		}
	})
}

func dial(t *testing.T, socket string) pluginapi.DevicePluginClient {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pluginapi.NewDevicePluginClient(conn)
}

func TestPreferred(t *testing.T) {
	id := func(i int) string { return GPUUUID(i) }
	tests := []struct {
		name      string
		available []string
		must      []string
		size      int
		want      []string
	}{
		{"lowest pair", []string{id(5), id(2), id(3), id(7)}, nil, 2, []string{id(2), id(3)}},
		{"must first", []string{id(1), id(6), id(4)}, []string{id(6)}, 2, []string{id(6), id(1)}},
		{"not enough", []string{id(3)}, nil, 2, []string{id(3)}},
		{"hex order past 9", []string{id(11), id(10), id(9)}, nil, 2, []string{id(9), id(10)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := preferred(tc.available, tc.must, tc.size); !slices.Equal(got, tc.want) {
				t.Errorf("preferred = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDeviceIDs(t *testing.T) {
	tests := []struct {
		opt  options
		want []string
	}{
		{options{count: 2}, []string{GPUUUID(0), GPUUUID(1)}},
		{options{count: 2, ids: []string{"0000:15:00.1", "0000:97:00.1"}}, []string{"0000:15:00.1", "0000:97:00.1"}},
	}
	for _, tt := range tests {
		var got []string
		for i := 0; i < tt.opt.count; i++ {
			got = append(got, tt.opt.deviceID(i))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%+v: IDs %v, want %v", tt.opt, got, tt.want)
		}
	}
}
