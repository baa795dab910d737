package nri

import (
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology"
)

// podEnvCache holds each running pod's podEnv, filled off the hot path
// (RunPodSandbox, Synchronize). CreateContainer reads it; it scans the
// port tables itself (bounded) only when it did not see the pod start or
// a lookup had missed then, and keeps that answer for the pod's other
// containers.
//
// A container that holds DRA NICs (its own claims') has an entry of its
// own under its pod, keyed by those NICs: containers of one pod may hold
// different ones, and the GID index must agree over exactly the NICs the
// container is given.
type podEnvCache struct {
	root string // the node's root, for the port tables
	mu   sync.RWMutex
	pods map[string]map[string]*podEnv // by sandbox, then draKey ("" for the leases alone)
}

func newPodEnvCache(root string) *podEnvCache {
	return &podEnvCache{root: root, pods: map[string]map[string]*podEnv{}}
}

func (c *podEnvCache) get(sandbox, draKey string) *podEnv {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.pods[sandbox][draKey]
}

func (c *podEnvCache) put(sandbox, draKey string, pe *podEnv) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pods[sandbox] == nil {
		c.pods[sandbox] = map[string]*podEnv{}
	}
	c.pods[sandbox][draKey] = pe
}

// forget drops what a sandbox cached.
func (c *podEnvCache) forget(sandbox string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pods, sandbox)
}

// reset drops everything (before a full Synchronize).
func (c *podEnvCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pods = map[string]map[string]*podEnv{}
}

// draKey names a container's DRA NICs (their ports), "" for none.
func draKey(nics []podinfo.DRANIC) string {
	names := make([]string, 0, len(nics))
	for _, n := range nics {
		names = append(names, n.NIC)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// buildPodEnv works out a sandbox's podEnv from its leases now.
func (p *Plugin) buildPodEnv(call *hookCall, leases []ipam.Lease) *podEnv {
	var ports portTables
	reader, err := topology.NewPortReader(p.envs.root)
	if err != nil {
		ports = unreadablePorts{err}
	} else {
		ports = reader
	}
	if call.soft == nil {
		call.soft = p.soft.devices(call, leases)
	}
	return leaseEnv(leases, call.dra, call.leaseNIC, ports, call.log().Warn)
}

// unreadablePorts answers every lookup with why the tables cannot be read:
// the variables that need no table are still set.
type unreadablePorts struct{ err error }

func (u unreadablePorts) GIDIndex(string, int, netip.Addr) (int, error) { return 0, u.err }
func (u unreadablePorts) PKeyIndex(string, int, uint16) (int, error)    { return 0, u.err }

// warmPodEnv works out a starting (or, on Synchronize, running) pod's
// podEnv, off the hot path.
func (p *Plugin) warmPodEnv(call *hookCall) {
	if !p.cfg.ncclEnv {
		return
	}
	if leases := p.state.SandboxLeases(call.pod.GetId()); len(leases) > 0 {
		p.envs.put(call.pod.GetId(), "", p.buildPodEnv(call, leases))
	}
}

// podEnv is the sandbox's podEnv as CreateContainer uses it: cached, or
// worked out now (a bounded scan of the port tables) when the plugin did
// not see the pod start or a lookup missed then; that answer is kept.
// nil: the pod holds no lease and the container no DRA NIC. The DRA NICs
// are known from the kubelet after the pod started: a container that holds
// some is worked out at the first CreateContainer of its set of them.
func (p *Plugin) podEnv(call *hookCall, leases []ipam.Lease) *podEnv {
	if len(leases) == 0 && len(call.dra) == 0 {
		return nil
	}
	id, key := call.pod.GetId(), draKey(call.dra)
	if pe := p.envs.get(id, key); pe != nil && !pe.retry {
		return pe
	}
	pe := p.buildPodEnv(call, leases)
	pe.retry = false
	p.envs.put(id, key, pe)
	return pe
}
