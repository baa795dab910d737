package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

type options struct {
	resource string
	count    int
	ids      []string // device IDs; empty: count GPU UUIDs
	dir      string
	poll     time.Duration
}

// plugin serves the DevicePlugin service for one resource.
type plugin struct {
	pluginapi.UnimplementedDevicePluginServer
	opt      options
	log      *slog.Logger
	endpoint string // socket file name inside opt.dir
}

func newPlugin(opt options, log *slog.Logger) *plugin {
	name := strings.NewReplacer("/", "-", ".", "-").Replace(opt.resource)
	return &plugin{opt: opt, log: log, endpoint: "fake-" + name + ".sock"}
}

// run serves and registers, and does both again whenever the socket goes
// (a kubelet restart wipes the dir), until ctx ends.
func (p *plugin) run(ctx context.Context) error {
	for {
		srv, err := p.serveAndRegister(ctx)
		if err != nil {
			if ctx.Err() != nil {
				_ = os.Remove(p.socket())
				return nil // stopped while (re)registering
			}
			return err
		}
		p.log.Info("registered", "resource", p.opt.resource, "count", p.opt.count, "socket", p.socket())
		p.waitSocketGone(ctx)
		srv.Stop()
		if ctx.Err() != nil {
			_ = os.Remove(p.socket())
			return nil
		}
		p.log.Info("socket removed (kubelet restarted?): registering again")
	}
}

func (p *plugin) socket() string { return filepath.Join(p.opt.dir, p.endpoint) }

func (p *plugin) serveAndRegister(ctx context.Context) (*grpc.Server, error) {
	if err := os.Remove(p.socket()); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	ln, err := net.Listen("unix", p.socket())
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", p.socket(), err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	go func() { _ = srv.Serve(ln) }()
	for {
		err := p.register(ctx)
		if err == nil {
			return srv, nil
		}
		p.log.Warn("registration failed, retrying", "err", err)
		select {
		case <-ctx.Done():
			srv.Stop()
			return nil, ctx.Err()
		case <-time.After(p.opt.poll):
		}
	}
}

func (p *plugin) register(ctx context.Context) error {
	conn, err := grpc.NewClient("unix://"+filepath.Join(p.opt.dir, "kubelet.sock"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: p.endpoint, ResourceName: p.opt.resource,
	})
	return err
}

func (p *plugin) waitSocketGone(ctx context.Context) {
	tick := time.NewTicker(p.opt.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, err := os.Stat(p.socket()); os.IsNotExist(err) {
				return
			}
		}
	}
}

// GetDevicePluginOptions: preferred allocation, no PreStartContainer.
func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}, nil
}

// GetPreferredAllocation prefers the lowest-numbered free GPUs, so pods
// asking for pairs get aligned pairs (GPUs 0-1, 2-3, ...), as the NVIDIA
// plugin prefers GPUs that sit together; the kubelet's own pick is random.
func (p *plugin) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, c := range req.ContainerRequests {
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{
			DeviceIDs: preferred(c.AvailableDeviceIDs, c.MustIncludeDeviceIDs, int(c.AllocationSize)),
		})
	}
	return resp, nil
}

// preferred returns must plus the lowest of available, size IDs in all.
func preferred(available, must []string, size int) []string {
	out := slices.Clone(must)
	rest := slices.Clone(available)
	slices.Sort(rest) // IDs are fixed-width hex: string order is index order
	for _, id := range rest {
		if len(out) >= size {
			break
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// ListAndWatch sends the devices once; they never change.
func (p *plugin) ListAndWatch(_ *pluginapi.Empty, stream pluginapi.DevicePlugin_ListAndWatchServer) error {
	devs := make([]*pluginapi.Device, p.opt.count)
	for i := range devs {
		devs[i] = &pluginapi.Device{ID: p.opt.deviceID(i), Health: pluginapi.Healthy}
	}
	if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// Allocate tells each container which GPUs it got, as the NVIDIA plugin does.
func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(c.DevicesIds, ",")},
		})
	}
	return resp, nil
}
