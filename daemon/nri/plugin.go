// Package nri is raild's NRI plugin: on CreateContainer it gives the
// containers of a pod that holds rail leases the RDMA character devices of
// its NICs, a raised RLIMIT_MEMLOCK and the NCCL/UCX variables naming those
// NICs, from state prepared beforehand (no sysfs walk, no network call on
// the hook).
package nri

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// Environment variables the plugin may set.
const (
	envNCCLHCA      = "NCCL_IB_HCA"
	envUCXDevices   = "UCX_NET_DEVICES"
	envNCCLGIDIndex = "NCCL_IB_GID_INDEX"
)

// State is what the plugin needs from raild.
type State interface {
	// SandboxLeases returns the leases a sandbox holds, from memory.
	SandboxLeases(sandbox string) []api.Lease
	// ReleaseSandbox releases what a sandbox holds, for when CNI DEL never came.
	ReleaseSandbox(ctx context.Context, sandbox string) error
	// NICMovedTo returns the sandbox that holds a NIC in move mode, from
	// memory.
	NICMovedTo(nic string) (sandbox string, moved bool)
}

// Plugin is raild's NRI plugin.
type Plugin struct {
	cfg      settings
	machine  *topology.Machine
	state    State
	log      *slog.Logger
	devs     atomic.Pointer[nodeDevices] // the node's devices now (UseMachine)
	affinity *gpuAffinity
	kubelet  *kubeletGPUs // nil: no gpuAutoInject or no PodResources
	gids     *gidCache

	mu       sync.Mutex
	releases map[string]*pendingRelease // sandbox -> release scheduled after StopPodSandbox
}

// New checks the configuration and prepares everything CreateContainer
// reads: the device list of every NIC, the node's RDMA devices by name and
// the NICs closest to each GPU. The kubelet is asked, for gpuAutoInject,
// when a pod starts.
func New(cfg Config, m *topology.Machine, st State, k Kubelet, log *slog.Logger) (*Plugin, error) {
	if m == nil {
		return nil, errors.New("nri: no topology: discover the machine first")
	}
	if st == nil {
		return nil, errors.New("nri: no lease state")
	}
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "nri")
	p := &Plugin{
		cfg:      s,
		machine:  m,
		state:    st,
		log:      log,
		gids:     newGIDCache(m.Root),
		releases: map[string]*pendingRelease{},
	}
	p.devs.Store(buildNodeDevices(m, s.UMAD, log))
	if s.GPUAutoInject {
		p.affinity = buildGPUAffinity(m, log)
		if k.Pods != nil {
			p.kubelet = newKubeletGPUs(k, p.affinity)
		} else {
			log.Warn("gpuAutoInject without the kubelet's PodResources socket: only GPUs the runtime " +
				"passes as CDI devices get their NICs")
		}
	}
	if p.devices().rdmaCM == nil {
		log.Warn("no usable /dev/infiniband/rdma_cm on this node: RDMA CM will not work in pods")
	}
	return p, nil
}

// CreateContainer adjusts a container of a pod that holds rail leases (or,
// with gpuAutoInject, was given GPUs; or carries an allowed rail.dev/devices
// annotation). Anything else is left untouched.
func (p *Plugin) CreateContainer(_ context.Context, pod *nriapi.PodSandbox, ctr *nriapi.Container) (*nriapi.ContainerAdjustment, []*nriapi.ContainerUpdate, error) {
	leases := p.state.SandboxLeases(pod.GetId())
	nics := p.containerNICs(pod, ctr, leases)
	extra := p.annotatedDevices(pod, ctr)
	if len(nics) == 0 && len(extra) == 0 {
		return nil, nil, nil
	}
	inj := p.collect(pod, ctr, nics, extra)
	if len(inj.devices) == 0 {
		return nil, nil, nil
	}

	adj := &nriapi.ContainerAdjustment{}
	for _, d := range inj.devices {
		adj.AddDevice(d)
	}
	if needsMemlock(ctr, p.cfg.memlock) {
		adj.AddRlimit("RLIMIT_MEMLOCK", p.cfg.memlock, p.cfg.memlock)
	}
	if p.cfg.ncclEnv {
		p.addEnv(adj, pod, ctr, leases, inj.nics)
	}
	p.log.Info("injecting RDMA devices", "container", ctrRef(pod, ctr), "devices", len(inj.devices), "nics", len(inj.nics))
	return adj, nil, nil
}

// containerNICs names the NICs a container gets: its pod's leased NICs,
// or with gpuAutoInject and no lease the NICs of the GPUs it was given.
func (p *Plugin) containerNICs(pod *nriapi.PodSandbox, ctr *nriapi.Container, leases []api.Lease) []string {
	var nics []string
	for _, l := range leases {
		for _, n := range l.NICs {
			nics = appendUnique(nics, n)
		}
	}
	if len(leases) > 0 || p.affinity == nil {
		return nics
	}
	return p.autoInjectNICs(pod, ctr)
}

// collect gathers the device nodes of the NICs, rdma_cm with them, and the
// annotation's choice, each once; a chosen uverbs brings its NIC's env.
func (p *Plugin) collect(pod *nriapi.PodSandbox, ctr *nriapi.Container, nics []string, extra []namedDevice) *injection {
	inj := newInjection(len(nics) + len(extra) + 1)
	devs := p.devices()
	for _, name := range nics {
		nd, ok := devs.nics[name]
		if !ok {
			p.log.Warn("leased NIC unknown to this node's topology: skipped", "container", ctrRef(pod, ctr), "nic", name)
			continue
		}
		inj.addNIC(nd)
	}
	if len(inj.nics) > 0 && devs.rdmaCM != nil {
		inj.addDevice(devs.rdmaCM)
	}
	for _, d := range extra {
		inj.addDevice(d.dev)
		if nd, ok := devs.nics[d.nic]; ok && strings.HasPrefix(d.dev.Path, deviceDir+"uverbs") {
			inj.nics = appendNIC(inj.nics, nd)
		}
	}
	return inj
}

// addEnv sets the NCCL/UCX variables the container does not set itself.
func (p *Plugin) addEnv(adj *nriapi.ContainerAdjustment, pod *nriapi.PodSandbox, ctr *nriapi.Container, leases []api.Lease, nics []*nicDevices) {
	if len(nics) == 0 {
		return
	}
	has := envKeys(ctr.GetEnv(), envNCCLHCA, envUCXDevices, envNCCLGIDIndex)
	if !has[0] {
		names := make([]string, len(nics))
		for i, n := range nics {
			names[i] = n.hca
		}
		adj.AddEnv(envNCCLHCA, "="+strings.Join(names, ","))
	}
	if !has[1] {
		var ucx []string
		for _, n := range nics {
			if n.ucx != "" {
				ucx = append(ucx, n.ucx)
			}
		}
		if len(ucx) > 0 {
			adj.AddEnv(envUCXDevices, strings.Join(ucx, ","))
		}
	}
	if !has[2] {
		if idx, ok := p.gidIndex(pod, leases); ok {
			adj.AddEnv(envNCCLGIDIndex, strconv.Itoa(idx))
		}
	}
}

// needsMemlock is false when the container already has at least the limit.
func needsMemlock(ctr *nriapi.Container, limit uint64) bool {
	for _, r := range ctr.GetRlimits() {
		if r.GetType() == "RLIMIT_MEMLOCK" && r.GetHard() >= limit && r.GetSoft() >= limit {
			return false
		}
	}
	return true
}

// envKeys reports which of the keys the environment sets.
func envKeys(env []string, keys ...string) []bool {
	has := make([]bool, len(keys))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		for i, key := range keys {
			if k == key {
				has[i] = true
			}
		}
	}
	return has
}

func ctrRef(pod *nriapi.PodSandbox, ctr *nriapi.Container) string {
	return fmt.Sprintf("%s/%s/%s", pod.GetNamespace(), pod.GetName(), ctr.GetName())
}

// devices is the node's RDMA devices as the last machine showed them.
func (p *Plugin) devices() *nodeDevices { return p.devs.Load() }

// UseMachine makes containers created from now on get the device nodes of
// m (the inventory's new snapshot: a NIC re-added with new uverbs numbers
// is injected with the new ones). Running containers keep what they got.
func (p *Plugin) UseMachine(m *topology.Machine) {
	p.devs.Store(buildNodeDevices(m, p.cfg.UMAD, p.log))
}
