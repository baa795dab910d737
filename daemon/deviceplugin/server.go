package deviceplugin

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/daemon/metrics"
)

// resourceServer serves the DevicePlugin service of one resource on its
// own socket, as kubelet expects one endpoint per registered resource.
type resourceServer struct {
	pluginapi.UnimplementedDevicePluginServer
	name     string
	endpoint string
	log      *slog.Logger
	calls    *metrics.Calls // nil: not measured
	path     string

	mu      sync.Mutex
	res     *resource     // as the latest machine shows it
	ids     []string      // its devices, every one with res.health
	changed chan struct{} // closed and replaced when the devices or their health change
	grpc    *grpc.Server
}

func newResourceServer(res *resource, dir string, calls *metrics.Calls, log *slog.Logger) *resourceServer {
	return &resourceServer{
		name:     res.name,
		endpoint: res.endpoint,
		calls:    calls,
		res:      res,
		ids:      res.deviceIDs(),
		log:      log.With("resource", res.name),
		path:     filepath.Join(dir, res.endpoint),
		changed:  make(chan struct{}),
	}
}

// start listens on the resource's socket (replacing a stale file) and
// serves in the background.
func (s *resourceServer) start() error {
	s.stop()
	if err := os.Remove(s.path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing stale socket %s: %w", s.path, err)
	}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.path, err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, s)
	s.mu.Lock()
	s.grpc = srv
	s.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil {
			s.log.Warn("device plugin server stopped", "socket", s.path, "error", err)
		}
	}()
	return nil
}

// stop ends the server and every ListAndWatch stream.
func (s *resourceServer) stop() {
	s.mu.Lock()
	srv := s.grpc
	s.grpc = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Stop()
	}
}

// running reports whether the server runs and its socket file is there
// (kubelet deletes the plugin sockets when it restarts).
func (s *resourceServer) running() bool {
	s.mu.Lock()
	up := s.grpc != nil
	s.mu.Unlock()
	if !up {
		return false
	}
	fi, err := os.Stat(s.path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// setResource takes the resource as a new machine shows it and wakes the
// ListAndWatch streams when its devices or their health changed (the
// device specs Allocate hands out follow without a new list).
func (s *resourceServer) setResource(r *resource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ids := s.res, r.deviceIDs()
	s.res = r
	if !slices.Equal(old.nics, r.nics) {
		s.log.Info("resource NICs changed", "from", old.nics, "to", r.nics)
	}
	if old.health == r.health && slices.Equal(s.ids, ids) {
		return
	}
	if old.health != r.health {
		s.log.Info("resource health changed", "from", old.health, "to", r.health)
	}
	s.ids = ids
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *resourceServer) snapshot() (*pluginapi.ListAndWatchResponse, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &pluginapi.ListAndWatchResponse{Devices: make([]*pluginapi.Device, len(s.ids))}
	for i, id := range s.ids {
		resp.Devices[i] = &pluginapi.Device{ID: id, Health: s.res.health}
	}
	return resp, s.changed
}

// The kubelet's calls, as metrics and logs name them. A ListAndWatch
// stream counts one call per device list it sends.
const (
	callOptions   = "GetDevicePluginOptions"
	callList      = "ListAndWatch"
	callPreferred = "GetPreferredAllocation"
	callAllocate  = "Allocate"
	callPreStart  = "PreStartContainer"
)

// observe counts and times one kubelet call that began at start, and logs
// it when it failed.
func (s *resourceServer) observe(call string, start time.Time, err error) {
	if err != nil {
		s.log.Warn("device plugin call failed", "call", call, "error", err)
	}
	s.calls.Observe(call, start, err)
}

// GetDevicePluginOptions: no PreStartContainer, preferred allocation offered.
func (s *resourceServer) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	defer s.observe(callOptions, time.Now(), nil)
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}, nil
}

// ListAndWatch sends the device list now and again on every health change.
func (s *resourceServer) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	for {
		start := time.Now()
		resp, changed := s.snapshot()
		err := stream.Send(resp)
		if err != nil {
			err = fmt.Errorf("sending the device list of %s: %w", s.name, err)
		}
		s.observe(callList, start, err)
		if err != nil {
			return err
		}
		select {
		case <-changed:
		case <-stream.Context().Done():
			return nil
		}
	}
}

// GetPreferredAllocation prefers the devices kubelet must include, then
// the available ones in their order.
func (s *resourceServer) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	defer s.observe(callPreferred, time.Now(), nil)
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, cr := range req.GetContainerRequests() {
		size := int(cr.GetAllocationSize())
		pick := slices.Clone(cr.GetMustIncludeDeviceIDs())
		for _, id := range cr.GetAvailableDeviceIDs() {
			if len(pick) >= size {
				break
			}
			if !slices.Contains(pick, id) {
				pick = append(pick, id)
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: pick})
	}
	return resp, nil
}

// Allocate gives every requesting container the resource's RDMA device
// nodes as the latest machine shows them, at the same path as on the host.
func (s *resourceServer) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (resp *pluginapi.AllocateResponse, err error) {
	defer func(start time.Time) { s.observe(callAllocate, start, err) }(time.Now())
	s.mu.Lock()
	ids, res := s.ids, s.res
	s.mu.Unlock()
	resp = &pluginapi.AllocateResponse{}
	for _, cr := range req.GetContainerRequests() {
		for _, id := range cr.GetDevicesIds() {
			if !slices.Contains(ids, id) {
				return nil, status.Errorf(codes.InvalidArgument, "device %q is not a device of %s now", id, s.name)
			}
		}
		car := &pluginapi.ContainerAllocateResponse{}
		for _, spec := range res.specs {
			car.Devices = append(car.Devices, &pluginapi.DeviceSpec{
				ContainerPath: spec.ContainerPath, HostPath: spec.HostPath, Permissions: spec.Permissions,
			})
		}
		resp.ContainerResponses = append(resp.ContainerResponses, car)
	}
	return resp, nil
}

// PreStartContainer has nothing to do (not requested in the options).
func (s *resourceServer) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	defer s.observe(callPreStart, time.Now(), nil)
	return &pluginapi.PreStartContainerResponse{}, nil
}
