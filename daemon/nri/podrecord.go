package nri

import (
	"slices"
	"strings"
	"sync"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology"
)

// podRecord is what a pod's leases give each of its containers, built
// once per pod off the hot path (RunPodSandbox, Synchronize): the leased
// NICs' devices with rdma_cm, the names of those the node does not know,
// the pod's own rxe devices on a softRoCE node and the pod's env.
// CreateContainer reads it and adds what is the container's own: its env,
// its rlimits (nri.memlock, the same for every pod, unless the container
// already has as much), its annotation's devices, its GPUs' NICs
// (gpuAutoInject) and its claims' DRA NICs.
//
// A record is never changed once published; the hook replaces it when
// what it was built from changed (the pod's leases, the node's tables) or
// when a lookup missed while it was built (a GID the kernel had not
// published yet, an rxe not there yet). Only the DRA envs grow in place.
type podRecord struct {
	leases []ipam.Lease // what it was built from, as SandboxLeases gave them
	tables *nodeTables  // the node's tables its devices were resolved in
	// soft are the pod's own rxe devices on a softRoCE node, by name;
	// softMissed: one was not readable (the next CreateContainer reads
	// it again).
	soft       map[string]*nicDevices
	softMissed bool
	// names are the leased NICs as its containers get them (a softRoCE
	// node: the pod's rxe names), each once, in lease order.
	names []string
	// inj are the devices of the names this node knows, then rdma_cm;
	// unknown are those it does not (the hook logs them per container).
	inj     *injection
	unknown []string
	// env is what the leases give the env (nil: no lease or ncclEnv off).
	env *podEnv
	// dra holds the env of each set of DRA NICs a container of the pod
	// holds (with its leases), by draKey: containers of one pod may hold
	// different NICs, and the GID index must agree over exactly the NICs
	// the container is given.
	dra *draEnvs
}

// draEnvs is a podRecord's env per set of DRA NICs.
type draEnvs struct {
	mu     sync.Mutex
	byNICs map[string]*podEnv
}

func (d *draEnvs) get(key string) *podEnv {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byNICs[key]
}

func (d *draEnvs) put(key string, pe *podEnv) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byNICs[key] = pe
}

// podRecords are the records of the pods the plugin saw start, by sandbox.
type podRecords struct {
	mu   sync.RWMutex
	pods map[string]*podRecord
}

func newPodRecords() *podRecords {
	return &podRecords{pods: map[string]*podRecord{}}
}

func (r *podRecords) get(sandbox string) *podRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.pods[sandbox]
}

func (r *podRecords) put(sandbox string, rec *podRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pods[sandbox] = rec
}

// forget drops a sandbox's record.
func (r *podRecords) forget(sandbox string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pods, sandbox)
}

// reset drops every record (before a full Synchronize).
func (r *podRecords) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pods = map[string]*podRecord{}
}

// warmPodRecord builds a starting (or, on Synchronize, running) pod's
// record, off the hot path.
func (p *Plugin) warmPodRecord(call *hookCall) {
	leases := p.state.SandboxLeases(call.pod.GetId())
	p.pods.put(call.pod.GetId(), p.buildPodRecord(call, leases, nil))
}

// currentRecord is the record CreateContainer reads for the pod as it is now
// (leases from memory): the one built when the pod started, or one built
// now and kept when there was none (the plugin did not see the pod start),
// when its leases changed since, or when a lookup had missed then; the
// node's tables replaced since are read again from memory only. The
// port tables and sysfs are read only to build.
func (p *Plugin) currentRecord(call *hookCall, leases []ipam.Lease) *podRecord {
	id := call.pod.GetId()
	rec := p.pods.get(id)
	switch {
	case rec == nil || rec.softMissed || !sameLeases(rec.leases, leases):
		rec = p.buildPodRecord(call, leases, rec)
		if rec.env != nil {
			rec.env.retry = false // this answer is kept, found or not
		}
	case rec.env != nil && rec.env.retry:
		next := rec.rebind(call.node())
		next.env = p.leaseEnv(call, next, nil)
		next.env.retry = false
		rec = next
	case rec.tables != call.node():
		rec = rec.rebind(call.node())
	default:
		return rec
	}
	p.pods.put(id, rec)
	return rec
}

// buildPodRecord works out a pod's record from its leases now: its rxe
// devices (read from sysfs, those prev does not hold yet) and its env
// (the port tables). The only step that reads sysfs.
func (p *Plugin) buildPodRecord(call *hookCall, leases []ipam.Lease, prev *podRecord) *podRecord {
	rec := &podRecord{leases: leases, dra: &draEnvs{byNICs: map[string]*podEnv{}}}
	if p.softRoCE {
		var known map[string]*nicDevices
		if prev != nil {
			known = prev.soft
		}
		rec.soft, rec.softMissed = readSoftRoCE(call, p.root, leases, known)
	}
	rec.names = leasedNICs(leases, p.softRoCE)
	rec = rec.rebind(call.node())
	if p.cfg.ncclEnv && len(leases) > 0 {
		rec.env = p.leaseEnv(call, rec, nil)
	}
	return rec
}

// leasedNICs names the NICs a pod's leases give its containers, each
// once, in lease order: on a softRoCE node the pod's rxe on each leased
// interface, else what the leases hold (a vf lease's VF, by the PCI
// address the node's tables know it by).
func leasedNICs(leases []ipam.Lease, softRoCE bool) []string {
	var nics []string
	for _, l := range leases {
		if softRoCE {
			if name := softRoCEName(l); name != "" {
				nics = appendUnique(nics, name)
			}
			continue
		}
		for _, n := range l.Holds() {
			nics = appendUnique(nics, n)
		}
	}
	return nics
}

// rebind is the record with its NICs resolved in the node's tables t.
func (r *podRecord) rebind(t *nodeTables) *podRecord {
	next := *r
	next.tables = t
	next.inj, next.unknown = nicInjection(next.names, next.nic, t.devs)
	return &next
}

// nicInjection gathers the devices of the named NICs, then rdma_cm when
// one of them has devices; unknown are the names lookup does not know.
func nicInjection(names []string, lookup func(string) (*nicDevices, bool), devs *nodeDevices) (inj *injection, unknown []string) {
	inj = newInjection(len(names) + 1)
	for _, name := range names {
		nd, ok := lookup(name)
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		inj.addNIC(nd)
	}
	if len(inj.nics) > 0 && devs.rdmaCM != nil {
		inj.addDevice(devs.rdmaCM)
	}
	return inj, unknown
}

// nic resolves a name of the record: the pod's rxe, else the node's NIC.
func (r *podRecord) nic(name string) (*nicDevices, bool) {
	if nd, ok := r.soft[name]; ok {
		return nd, true
	}
	return r.tables.devs.nic(name)
}

// leaseNIC resolves a lease's NIC to what its containers get: on a
// softRoCE node the pod's rxe on the lease's interface, else the node's NIC.
func (r *podRecord) leaseNIC(l ipam.Lease, nic string) (*nicDevices, bool) {
	if r.soft != nil {
		nd, ok := r.soft[softRoCEName(l)]
		return nd, ok
	}
	nd, ok := r.tables.devs.nics[nic]
	return nd, ok
}

// leaseEnv works out the env of the record's leases and the DRA NICs dra
// (a bounded scan of the port tables).
func (p *Plugin) leaseEnv(call *hookCall, rec *podRecord, dra []podinfo.DRANIC) *podEnv {
	var ports portTables
	reader, err := topology.NewPortReader(p.root)
	if err != nil {
		ports = unreadablePorts{err}
	} else {
		ports = reader
	}
	return leaseEnv(rec.leases, dra, rec.leaseNIC, ports, call.log().Warn)
}

// podEnv is the env a container gets from its pod's leases and its own
// DRA NICs: the record's, or for a set of DRA NICs, the one worked out at
// the first CreateContainer that holds it (kept: the port tables are read
// once per set). nil: the pod holds no lease and the container no DRA NIC.
func (p *Plugin) podEnv(call *hookCall, rec *podRecord) *podEnv {
	if len(call.dra) == 0 {
		return rec.env
	}
	key := draKey(call.dra)
	if pe := rec.dra.get(key); pe != nil && !pe.retry {
		return pe
	}
	pe := p.leaseEnv(call, rec, call.dra)
	pe.retry = false
	rec.dra.put(key, pe)
	return pe
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

// sameLeases is true when a and b are the same leases in what a record is
// built from: the interface, its address, NICs, mode, P_Key and primary,
// and when it was made (a lease made again for the same interface).
func sameLeases(a, b []ipam.Lease) bool {
	return slices.EqualFunc(a, b, func(x, y ipam.Lease) bool {
		return x.Key() == y.Key() && x.Address == y.Address && x.Mode == y.Mode && x.PKey == y.PKey &&
			x.PrimaryIf == y.PrimaryIf && x.Created.Equal(y.Created) && slices.Equal(x.NICs, y.NICs)
	})
}
