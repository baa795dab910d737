package nri

import (
	"net/netip"
	"sync"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// gidKey names one GID lookup: the pod's address on one NIC (a target:
// mlx4_0:2 looks in port 2 of mlx4_0).
type gidKey struct {
	nic  string
	addr netip.Addr
}

// gidCache holds the GID index of each macvlan pod address. It is filled
// off the hot path (RunPodSandbox, Synchronize); CreateContainer falls back
// to a bounded scan only when the kernel had not yet published the GID then.
type gidCache struct {
	root string
	mu   sync.RWMutex
	idx  map[gidKey]int
	keys map[string][]gidKey // by sandbox, for cleanup
}

func newGIDCache(root string) *gidCache {
	return &gidCache{root: root, idx: map[gidKey]int{}, keys: map[string][]gidKey{}}
}

// get returns the cached index.
func (c *gidCache) get(k gidKey) (int, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.idx[k]
	return i, ok
}

// resolve returns the index from the cache or, on a miss, scans the GID
// table of nd's port and caches what it found.
func (c *gidCache) resolve(sandbox string, k gidKey, nd *nicDevices) (int, error) {
	if i, ok := c.get(k); ok {
		return i, nil
	}
	ports, err := topology.NewPortReader(c.root)
	if err != nil {
		return 0, err
	}
	i, err := ports.GIDIndex(nd.device, nd.port, k.addr)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.idx[k] = i
	c.keys[sandbox] = append(c.keys[sandbox], k)
	return i, nil
}

// forget drops what a sandbox cached.
func (c *gidCache) forget(sandbox string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.keys[sandbox] {
		delete(c.idx, k)
	}
	delete(c.keys, sandbox)
}

// reset drops everything (before a full Synchronize).
func (c *gidCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.idx = map[gidKey]int{}
	c.keys = map[string][]gidKey{}
}

// macvlanKeys lists the (NIC, address) pairs of a sandbox's macvlan leases.
func macvlanKeys(leases []ipam.Lease) []gidKey {
	var keys []gidKey
	for _, l := range leases {
		if api.Mode(l.Mode) != api.ModeMacvlan {
			continue
		}
		for _, nic := range l.NICs {
			keys = append(keys, gidKey{nic: nic, addr: l.Address.Addr()})
		}
	}
	return keys
}

// gidIndex returns the NCCL_IB_GID_INDEX for a pod's macvlan leases: the
// GID index of its rail address, when every macvlan NIC agrees on it.
func (p *Plugin) gidIndex(call *hookCall, leases []ipam.Lease) (int, bool) {
	found := -1
	for _, k := range append(macvlanKeys(leases), draGIDKeys(call.dra)...) {
		nd, ok := call.node().devs.nics[k.nic]
		if !ok || nd.ucx == "" || !k.addr.IsValid() {
			return 0, false
		}
		idx, err := p.gids.resolve(call.pod.GetId(), k, nd)
		if err != nil {
			call.log().Warn("cannot find the GID index", "error", err)
			return 0, false
		}
		if found >= 0 && idx != found {
			call.log().Warn("the pod's RoCE NICs hold its addresses at different GID indices: " + envNCCLGIDIndex + " not set")
			return 0, false
		}
		found = idx
	}
	return found, found >= 0
}

// warmGIDs fills the GID cache for one sandbox, off the hot path.
func (p *Plugin) warmGIDs(call *hookCall) {
	if !p.cfg.ncclEnv {
		return
	}
	for _, k := range macvlanKeys(p.state.SandboxLeases(call.pod.GetId())) {
		if nd, ok := call.node().devs.nics[k.nic]; ok && nd.ucx != "" {
			// A miss is retried on CreateContainer: the kernel publishes GIDs
			// asynchronously after the address is added.
			_, _ = p.gids.resolve(call.pod.GetId(), k, nd)
		}
	}
}
