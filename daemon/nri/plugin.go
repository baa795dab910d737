// Package nri is raild's NRI plugin: on CreateContainer it gives the
// containers of a pod that holds rail leases the RDMA character devices of
// its NICs, a raised RLIMIT_MEMLOCK and the NCCL/UCX variables naming those
// NICs, from state prepared beforehand (no sysfs walk, no network call on
// the hook).
package nri

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology"
)

// State is what the plugin needs from raild.
type State interface {
	// SandboxLeases returns the leases a sandbox holds, from memory.
	SandboxLeases(sandbox string) []ipam.Lease
	// ReleaseSandbox releases what a sandbox holds, for when CNI DEL never came.
	ReleaseSandbox(ctx context.Context, sandbox string) error
	// NICMovedTo returns the sandbox that holds a NIC in move mode, from
	// memory.
	NICMovedTo(nic string) (sandbox string, moved bool)
}

// Options wire a Plugin.
type Options struct {
	Config Config
	// Machine is the node as it is now (the inventory's current snapshot).
	// The hooks read it and rebuild their device and GPU tables when it
	// changed: a NIC re-added with new uverbs numbers is injected with the
	// new ones; running containers keep what they got.
	Machine func() *topology.Machine
	State   State
	// GPUs tells gpuAutoInject which GPUs the kubelet gave a container
	// (asked when the pod starts); nil or without a kubelet: only GPUs the
	// runtime passes as CDI devices count.
	GPUs *podinfo.GPUSource
	// TopologyFile is raild's topologyFile (the node's NCCL topology file,
	// as raild reads it): with ncclEnv, containers get it read-only at
	// topoFileInContainer and NCCL_TOPO_FILE naming it. Empty: none.
	TopologyFile string
	// DRAHeld is the table of the NICs DRA NIC drivers gave the node's
	// pods; with GPUs' NICDrivers and a kubelet, the plugin fills it when a
	// pod starts and completes those pods' containers (memlock, env; never
	// device nodes, never a move). Nil: DRA NICs are not completed.
	DRAHeld *podinfo.DRAHeld
	// Hooks counts and times every hook (nil: not measured).
	Hooks *metrics.Calls
	// Changed is told (it must not block) when a sandbox's network is set
	// up and when a container raild gave RDMA devices started: the
	// moments to check its readiness. Nil: nobody is told.
	Changed func(sandbox string)
	// Records keep what each container was given, for the readiness checks
	// (nil: the plugin keeps its own, nobody reads them).
	Records *Records
	// Proc is the procfs containers' processes are pinned in when they
	// start (raild's readiness.procRoot; "": /proc).
	Proc string
	// SoftRoCE: the node is in softRoCE mode; a leased pod's containers
	// get the rxe devices the plugin made in the pod (softroce.go).
	SoftRoCE bool
	Log      *slog.Logger
}

// Plugin is raild's NRI plugin.
type Plugin struct {
	cfg     settings
	machine func() *topology.Machine
	state   State
	log     *slog.Logger
	hooks   map[string]*metrics.Call   // by hook name
	node    atomic.Pointer[nodeTables] // built from the last machine a hook read
	kubelet *kubeletGPUs               // nil: neither gpuAutoInject nor DRA NICs, or no kubelet
	gpus    *podinfo.GPUSource         // Options.GPUs: its resolver maps CDI device names
	draHeld *podinfo.DRAHeld           // nil: DRA NICs are not completed
	pods    *podRecords                // what each pod's leases give its containers
	// root is the node's root, for the port tables and the pods' rxe;
	// softRoCE: the node is in softRoCE mode (softroce.go).
	root     string
	softRoCE bool
	// topoFile is the node's NCCL topology file as the runtime mounts it
	// (a path on the host); empty: none.
	topoFile string
	records  *Records             // Options.Records
	proc     string               // Options.Proc
	changed  func(sandbox string) // Options.Changed

	mu       sync.Mutex
	releases map[string]*pendingRelease // sandbox -> release scheduled after StopPodSandbox
}

// nodeTables is what the hooks look up, built from one machine: the
// device list of every NIC, the node's RDMA devices by name and, for
// gpuAutoInject, the NICs closest to each GPU.
type nodeTables struct {
	machine *topology.Machine
	devs    *nodeDevices
	gpus    *gpuAffinity // nil without gpuAutoInject
}

// New checks the configuration and builds the tables CreateContainer
// reads from the node as it is now.
func New(opt Options) (*Plugin, error) {
	if opt.Machine == nil || opt.Machine() == nil {
		return nil, errors.New("nri: no topology: discover the machine first")
	}
	if opt.State == nil {
		return nil, errors.New("nri: no lease state")
	}
	s, err := opt.Config.settings()
	if err != nil {
		return nil, err
	}
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "nri")
	p := &Plugin{
		cfg:      s,
		machine:  opt.Machine,
		state:    opt.State,
		log:      log,
		hooks:    hookMetrics(opt.Hooks),
		pods:     newPodRecords(),
		root:     opt.Machine().Root,
		softRoCE: opt.SoftRoCE,
		topoFile: s.topoFileSource(opt.TopologyFile),
		records:  cmp.Or(opt.Records, NewRecords()),
		proc:     cmp.Or(opt.Proc, "/proc"),
		changed:  opt.Changed,
		gpus:     opt.GPUs,
		releases: map[string]*pendingRelease{},
	}
	node := p.tables()
	p.startDRANICs(opt)
	if s.GPUAutoInject {
		node.gpus.logGaps(log)
		if opt.GPUs.AsksKubelet() {
			if p.kubelet == nil {
				p.kubelet = newKubeletGPUs(opt.GPUs, nil)
			}
		} else {
			log.Warn("gpuAutoInject without the kubelet's PodResources socket: only GPUs the runtime " +
				"passes as CDI devices get their NICs")
		}
	}
	if node.devs.rdmaCM == nil {
		log.Warn("no usable /dev/infiniband/rdma_cm on this node: RDMA CM will not work in pods")
	}
	return p, nil
}

// tables are the hooks' tables for the node as it is now, rebuilt when
// the inventory published a new machine since the last hook.
func (p *Plugin) tables() *nodeTables {
	m := p.machine()
	if t := p.node.Load(); t != nil && t.machine == m {
		return t
	}
	t := &nodeTables{machine: m, devs: buildNodeDevices(m, p.cfg.UMAD, p.log)}
	if p.cfg.GPUAutoInject {
		t.gpus = buildGPUAffinity(m, p.gpus)
	}
	p.node.Store(t)
	return t
}

// CreateContainer adjusts a container of a pod that holds rail leases (or,
// with gpuAutoInject, was given GPUs; or carries an allowed rail.dev/devices
// annotation). Anything else is left untouched.
func (p *Plugin) CreateContainer(_ context.Context, pod *nriapi.PodSandbox, ctr *nriapi.Container) (*nriapi.ContainerAdjustment, []*nriapi.ContainerUpdate, error) {
	call := p.begin(hookCreateContainer, pod, ctr)
	adj := p.createContainer(&call)
	p.record(&call, adj)
	call.end(nil)
	return adj, nil, nil
}

func (p *Plugin) createContainer(call *hookCall) *nriapi.ContainerAdjustment {
	leases := p.state.SandboxLeases(call.pod.GetId())
	rec := p.currentRecord(call, leases)
	call.dra = p.containerDRANICs(call)
	var auto []string
	if len(leases) == 0 && p.cfg.GPUAutoInject && len(call.dra) == 0 {
		auto = p.autoInjectNICs(call)
	}
	extra := p.annotatedDevices(call)
	if len(rec.names) == 0 && len(auto) == 0 && len(extra) == 0 && len(call.dra) == 0 {
		return nil
	}
	for _, name := range rec.unknown {
		call.log().Warn("leased NIC unknown to this node's topology: skipped", "nic", name)
	}
	inj := p.containerInjection(call, rec, auto, extra)
	if len(inj.devices) == 0 && len(call.dra) == 0 {
		return nil
	}

	adj := &nriapi.ContainerAdjustment{}
	for _, d := range inj.devices {
		adj.AddDevice(d)
	}
	if needsMemlock(call.ctr, p.cfg.memlock) {
		adj.AddRlimit("RLIMIT_MEMLOCK", p.cfg.memlock, p.cfg.memlock)
	}
	if p.cfg.ncclEnv {
		p.addEnv(call, adj, inj.nics, p.podEnv(call, rec))
	}
	call.log().Info("injecting RDMA devices", "devices", len(inj.devices), "nics", len(inj.nics), "draNICs", len(call.dra))
	return adj
}

// containerInjection is the record's devices and NICs, with what is the
// container's own: with gpuAutoInject the NICs of its GPUs (auto, when
// its pod holds no lease), its annotation's devices (a chosen uverbs
// brings its NIC's env), and its DRA NICs for the env. The record's own
// injection is shared, never changed: one with more is a copy.
func (p *Plugin) containerInjection(call *hookCall, rec *podRecord, auto []string, extra []namedDevice) *injection {
	if len(auto) == 0 && len(extra) == 0 && len(call.dra) == 0 {
		return rec.inj
	}
	devs := call.node().devs
	var inj *injection
	if len(auto) > 0 { // the pod holds no lease: the record has no device
		var unknown []string
		inj, unknown = nicInjection(auto, devs.nic, devs)
		for _, name := range unknown {
			call.log().Warn("leased NIC unknown to this node's topology: skipped", "nic", name)
		}
	} else {
		inj = rec.inj.clone()
	}
	for _, d := range extra {
		inj.addDevice(d.dev)
		if nd, ok := devs.nics[d.nic]; ok && strings.HasPrefix(d.dev.Path, deviceDir+"uverbs") {
			inj.nics = appendNIC(inj.nics, nd)
		}
	}
	inj.addDRA(devs, call.dra)
	return inj
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
