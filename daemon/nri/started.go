package nri

import (
	"context"
	"log/slog"
	"strconv"
	"sync"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/process"
)

// ContainerRecord is what raild gave one container that asked for RDMA,
// and its init process once it started: what the readiness checks compare
// with the container's own view.
type ContainerRecord struct {
	ID   string
	Name string
	Pid  int // 0 until the container started
	// Start is the start time of the process that held Pid when the
	// container started (process.Pin): the readiness checks read that
	// process only. 0 when it could not be pinned (already gone) and once
	// the container stopped: the pid is kept for messages, never read.
	Start   uint64
	Devices []DeviceRecord
	// DriverDevices are the device nodes a DRA NIC driver injects for the
	// container's claims (the uverbs node of each claimed NIC's RDMA
	// device): not raild's to inject, but the container must hold them.
	DriverDevices []DriverDeviceRecord
	// Memlock is the RLIMIT_MEMLOCK the container should hold (nri.memlock).
	Memlock uint64
	// GIDIndex is the NCCL_IB_GID_INDEX the container sees (raild's or its
	// own); -1 when it has none.
	GIDIndex int
}

// DeviceRecord is one injected device node.
type DeviceRecord struct {
	Path         string
	Major, Minor int64
}

// DriverDeviceRecord is one device node a DRA NIC driver injects: the
// node, the NIC (port) it opens and the claim that holds that NIC.
type DriverDeviceRecord struct {
	DeviceRecord
	NIC    string
	Driver string
	Claim  string
}

// Records are what the plugin gave each container, by sandbox and
// container ID: the plugin writes them, the readiness checks read them
// (SandboxContainers). raild makes them before both (Options.Records). A
// hook adds one entry under a short lock, nothing more.
type Records struct {
	mu        sync.Mutex
	bySandbox map[string]map[string]*ContainerRecord
}

// NewRecords holds no record yet.
func NewRecords() *Records {
	return &Records{bySandbox: map[string]map[string]*ContainerRecord{}}
}

// created records what CreateContainer gave a container; an older
// container of the same name (a restart) is forgotten.
func (r *Records) created(sandbox string, rec *ContainerRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ctrs := r.bySandbox[sandbox]
	if ctrs == nil {
		ctrs = map[string]*ContainerRecord{}
		r.bySandbox[sandbox] = ctrs
	}
	for id, old := range ctrs {
		if old.Name == rec.Name && id != rec.ID {
			delete(ctrs, id)
		}
	}
	if old, ok := ctrs[rec.ID]; ok && rec.Pid == 0 {
		rec.Pid, rec.Start = old.Pid, old.Start
	}
	ctrs[rec.ID] = rec
}

// started sets a recorded container's pinned process; false when raild
// gave it nothing.
func (r *Records) started(sandbox, id string, proc process.Ref) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.bySandbox[sandbox][id]
	if ok {
		rec.Pid, rec.Start = proc.Pid, proc.Start
	}
	return ok
}

// stopped drops a recorded container's process (its pid is free for any
// other process now); false when raild gave it nothing.
func (r *Records) stopped(sandbox, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.bySandbox[sandbox][id]
	if ok {
		rec.Start = 0
	}
	return ok
}

func (r *Records) forget(sandbox string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.bySandbox, sandbox)
}

func (r *Records) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bySandbox = map[string]map[string]*ContainerRecord{}
}

// SandboxContainers lists the containers of a sandbox that raild gave RDMA
// devices, from memory.
func (r *Records) SandboxContainers(sandbox string) []ContainerRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ContainerRecord, 0, len(r.bySandbox[sandbox]))
	for _, rec := range r.bySandbox[sandbox] {
		out = append(out, *rec)
	}
	return out
}

// record keeps what an adjustment gave a container, and what the DRA NIC
// drivers of its claims inject (nil adjustment: nothing).
func (p *Plugin) record(call *hookCall, adj *nriapi.ContainerAdjustment) {
	devs := adj.GetLinux().GetDevices()
	if adj == nil || (len(devs) == 0 && len(call.dra) == 0) {
		return
	}
	proc := p.pin(int(call.ctr.GetPid()))
	rec := &ContainerRecord{ID: call.ctr.GetId(), Name: call.ctr.GetName(), Pid: proc.Pid, Start: proc.Start,
		Memlock: p.cfg.memlock, GIDIndex: -1, Devices: make([]DeviceRecord, 0, len(devs)),
		DriverDevices: driverDevices(call.node().devs, call.dra)}
	for _, d := range devs {
		rec.Devices = append(rec.Devices, DeviceRecord{Path: d.GetPath(), Major: d.GetMajor(), Minor: d.GetMinor()})
	}
	rec.GIDIndex = gidIndexSeen(adj, call.ctr.GetEnv())
	p.records.created(call.pod.GetId(), rec)
}

// gidIndexSeen is the NCCL_IB_GID_INDEX the container will see: the one
// raild adds, else its own.
func gidIndexSeen(adj *nriapi.ContainerAdjustment, env []string) int {
	for _, kv := range adj.GetEnv() {
		if kv.GetKey() == envNCCLGIDIndex {
			if i, err := strconv.Atoi(kv.GetValue()); err == nil {
				return i
			}
		}
	}
	for _, kv := range env {
		if v, ok := cutKey(kv, envNCCLGIDIndex); ok {
			if i, err := strconv.Atoi(v); err == nil {
				return i
			}
		}
	}
	return -1
}

func cutKey(kv, key string) (string, bool) {
	if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
		return kv[len(key)+1:], true
	}
	return "", false
}

// PostStartContainer pins the process of a container raild gave RDMA
// devices (its pid and start time) and tells the readiness tracker to
// check it.
func (p *Plugin) PostStartContainer(_ context.Context, pod *nriapi.PodSandbox, ctr *nriapi.Container) error {
	call := p.begin(hookPostStartContainer, pod, ctr)
	if p.records.started(pod.GetId(), ctr.GetId(), p.pin(int(ctr.GetPid()))) {
		p.notify(pod.GetId())
	}
	call.end(nil)
	return nil
}

// StopContainer drops the process of a container raild gave RDMA devices:
// its pid may go to any other process from now on.
func (p *Plugin) StopContainer(_ context.Context, pod *nriapi.PodSandbox, ctr *nriapi.Container) ([]*nriapi.ContainerUpdate, error) {
	call := p.begin(hookStopContainer, pod, ctr)
	if p.records.stopped(pod.GetId(), ctr.GetId()) {
		p.notify(pod.GetId())
	}
	call.end(nil)
	return nil, nil
}

// pin is the process that holds pid now (pid 0: none yet); a pid whose
// process is already gone keeps start 0 and is never read.
func (p *Plugin) pin(pid int) process.Ref {
	if pid <= 0 {
		return process.Ref{}
	}
	ref, err := process.Pin(p.proc, pid)
	if err != nil {
		return process.Ref{Pid: pid}
	}
	return ref
}

// notify tells the readiness tracker a sandbox changed (it never blocks).
func (p *Plugin) notify(sandbox string) {
	if p.changed != nil {
		p.changed(sandbox)
	}
}

// syncContainers records, after raild (re)connects, what the running
// containers of leased pods were given, as CreateContainer would give it
// now, with their pids.
func (p *Plugin) syncContainers(pods []*nriapi.PodSandbox, ctrs []*nriapi.Container) {
	p.records.reset()
	byID := make(map[string]*nriapi.PodSandbox, len(pods))
	for _, pod := range pods {
		byID[pod.GetId()] = pod
	}
	quiet := slog.New(slog.DiscardHandler)
	for _, ctr := range ctrs {
		pod, ok := byID[ctr.GetPodSandboxId()]
		if !ok || ctr.GetState() != nriapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		call := p.begin(hookSynchronize, pod, ctr)
		call.lg = quiet
		p.record(&call, p.createContainer(&call))
	}
	for _, pod := range pods {
		p.notify(pod.GetId())
	}
}
