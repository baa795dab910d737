// Package deviceplugin registers Rail's RDMA resources with kubelet
// (device plugin API v1beta1), so schedulers and quotas can count them and
// runtimes without NRI still get the device nodes from Allocate.
package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/pkg/topology"
)

// registerTimeout bounds one Register call to kubelet.
const registerTimeout = 10 * time.Second

// Plugin is Rail's device plugin: one resource server per resource.
type Plugin struct {
	cfg     settings
	cfgErr  error
	machine *topology.Machine
	log     *slog.Logger
}

// New prepares the plugin; a configuration error is returned by Run (and
// by Config.Validate beforehand).
func New(cfg Config, m *topology.Machine, log *slog.Logger) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := cfg.settings()
	if err == nil && m == nil {
		err = errors.New("devicePlugin: no topology: discover the machine first")
	}
	return &Plugin{cfg: s, cfgErr: err, machine: m, log: log.With("component", "deviceplugin")}
}

// kubeletID identifies one kubelet.sock file, to notice it being recreated.
type kubeletID struct {
	ino   uint64
	mtime time.Time
}

// Run serves the resources and keeps them registered: every PollInterval it
// refreshes health from the port states, restarts a server whose socket
// kubelet removed, and registers again when kubelet.sock is recreated.
func (p *Plugin) Run(ctx context.Context) error {
	if p.cfgErr != nil {
		return p.cfgErr
	}
	resources, err := buildResources(p.cfg, p.machine, p.log)
	if err != nil {
		return err
	}
	ports, err := topology.NewPortReader(p.machine.Root)
	if err != nil {
		return fmt.Errorf("devicePlugin: port states: %w", err)
	}
	servers := make([]*resourceServer, len(resources))
	for i, r := range resources {
		servers[i] = newResourceServer(r, p.cfg.Dir, p.log)
	}
	defer func() {
		for _, s := range servers {
			s.stop()
			_ = os.Remove(s.path)
		}
	}()
	registered := make([]bool, len(servers))
	var last kubeletID
	tick := time.NewTicker(p.cfg.poll)
	defer tick.Stop()
	for {
		last = p.reconcile(ctx, ports, servers, registered, last)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// reconcile is one pass of Run's loop; it returns the kubelet.sock seen.
func (p *Plugin) reconcile(ctx context.Context, ports *topology.PortReader, servers []*resourceServer, registered []bool, last kubeletID) kubeletID {
	for i, s := range servers {
		s.setHealth(s.res.health(ports))
		if s.running() {
			continue
		}
		registered[i] = false
		if err := s.start(); err != nil {
			p.log.Error("cannot serve the device plugin socket", "resource", s.res.name, "err", err)
		}
	}
	kubeletSock := filepath.Join(p.cfg.Dir, filepath.Base(pluginapi.KubeletSocket))
	id, ok := statID(kubeletSock)
	if !ok {
		clear(registered)
		return kubeletID{}
	}
	if id != last {
		clear(registered)
	}
	for i, s := range servers {
		if registered[i] || !s.running() {
			continue
		}
		if err := register(ctx, kubeletSock, s.res); err != nil {
			p.log.Warn("registration with kubelet failed; retrying", "resource", s.res.name, "err", err)
			continue
		}
		registered[i] = true
		p.log.Info("registered with kubelet", "resource", s.res.name, "endpoint", s.res.endpoint, "devices", s.res.count)
	}
	return id
}

func statID(path string) (kubeletID, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return kubeletID{}, false
	}
	id := kubeletID{mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = st.Ino
	}
	return id, true
}

// register tells kubelet about one resource and its endpoint.
func register(ctx context.Context, kubeletSock string, r *resource) error {
	conn, err := grpc.NewClient("unix://"+kubeletSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dialing kubelet at %s: %w", kubeletSock, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     r.endpoint,
		ResourceName: r.name,
		Options:      &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true},
	})
	if err != nil {
		return fmt.Errorf("registering %s with kubelet at %s: %w", r.name, kubeletSock, err)
	}
	return nil
}
