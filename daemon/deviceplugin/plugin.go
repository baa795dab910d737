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

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/pkg/topology"
)

// registerTimeout bounds one Register call to kubelet.
const registerTimeout = 10 * time.Second

// Options wire a Plugin.
type Options struct {
	Config Config
	// Machine is the node as it is now (the inventory's current snapshot).
	Machine func() *topology.Machine
	// Calls counts and times the kubelet's calls (nil: not measured).
	Calls *metrics.Calls
	Log   *slog.Logger
}

// Plugin is Rail's device plugin: one resource server per resource. Its
// resources follow the node as the inventory shows it (MachineChanged).
type Plugin struct {
	cfg     settings
	cfgErr  error
	machine func() *topology.Machine
	calls   *metrics.Calls
	log     *slog.Logger
	updated chan struct{} // a new machine is waiting (capacity 1)
}

// New prepares the plugin; a configuration error is returned by Run (and
// by Config.Validate beforehand).
func New(opt Options) *Plugin {
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := opt.Config.settings()
	if err == nil && (opt.Machine == nil || opt.Machine() == nil) {
		err = errors.New("devicePlugin: no topology: discover the machine first")
	}
	return &Plugin{cfg: s, cfgErr: err, machine: opt.Machine, calls: opt.Calls,
		log: log.With("component", "deviceplugin"), updated: make(chan struct{}, 1)}
}

// MachineChanged tells the plugin the inventory published a new machine:
// Run reads it at once (else on its next poll). A NIC whose ports are all
// down makes its resources Unhealthy, a removed NIC's devices go, a
// re-added one's come back with its new device nodes. It never blocks.
func (p *Plugin) MachineChanged() {
	select {
	case p.updated <- struct{}{}:
	default: // Run has one waiting already and reads the latest
	}
}

// kubeletID identifies one kubelet.sock file, to notice it being recreated.
type kubeletID struct {
	ino   uint64
	mtime time.Time
}

// Run serves the resources and keeps them registered: whenever the machine
// changed (MachineChanged, or seen on a poll) it refreshes their NICs,
// devices and health, and
// every PollInterval it restarts a server whose socket kubelet removed
// and registers again when kubelet.sock is recreated.
func (p *Plugin) Run(ctx context.Context) error {
	if p.cfgErr != nil {
		return p.cfgErr
	}
	start := p.machine()
	rails, err := railNICs(p.cfg, start)
	if err != nil {
		return err
	}
	if _, skipped := usableNICs(start); len(skipped) > 0 {
		p.log.Warn("NICs without a uverbs device: not offered to pods", "nics", skipped)
	}
	resources := buildResources(p.cfg, start, rails)
	servers := make([]*resourceServer, len(resources))
	for i, r := range resources {
		servers[i] = newResourceServer(r, p.cfg.Dir, p.calls, p.log)
	}
	defer func() {
		for _, s := range servers {
			s.stop()
			_ = os.Remove(s.path)
		}
	}()
	registered := make([]bool, len(servers))
	applied := start
	var last kubeletID
	tick := time.NewTicker(p.cfg.poll)
	defer tick.Stop()
	for {
		applied = p.refresh(servers, rails, applied)
		last = p.reconcile(ctx, servers, registered, last)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-p.updated:
		}
	}
}

// refresh gives every resource its NICs, devices and health from the
// latest machine, if it is not the one applied already.
func (p *Plugin) refresh(servers []*resourceServer, rails []string, applied *topology.Machine) *topology.Machine {
	m := p.machine()
	if m == applied {
		return m
	}
	for i, r := range buildResources(p.cfg, m, rails) {
		servers[i].setResource(r)
	}
	return m
}

// reconcile is one pass of Run's loop; it returns the kubelet.sock seen.
func (p *Plugin) reconcile(ctx context.Context, servers []*resourceServer, registered []bool, last kubeletID) kubeletID {
	for i, s := range servers {
		if s.running() {
			continue
		}
		registered[i] = false
		if err := s.start(); err != nil {
			p.log.Error("cannot serve the device plugin socket", "resource", s.name, "error", err)
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
		if err := register(ctx, kubeletSock, s.name, s.endpoint); err != nil {
			p.log.Warn("registration with kubelet failed; retrying", "resource", s.name, "error", err)
			continue
		}
		registered[i] = true
		p.log.Info("registered with kubelet", "resource", s.name, "endpoint", s.endpoint)
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
func register(ctx context.Context, kubeletSock, name, endpoint string) error {
	conn, err := grpc.NewClient("unix://"+kubeletSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dialing kubelet at %s: %w", kubeletSock, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     endpoint,
		ResourceName: name,
		Options:      &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true},
	})
	if err != nil {
		return fmt.Errorf("registering %s with kubelet at %s: %w", name, kubeletSock, err)
	}
	return nil
}
