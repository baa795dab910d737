package serve

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podreport"
	"github.com/railcni/rail/daemon/readiness"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// railReadiness wires the rail.dev/RDMAReady checks: what placement said
// about each attachment (remembered from the service's reports, for
// doctor), the leases, the NRI plugin's container records.
type railReadiness struct {
	placed    *placements
	sink      *podreport.Reporter // nil without an API server
	leases    func() []ipam.Lease
	held      *podinfo.DRAHeld // the NICs DRA NIC drivers gave pods (nil: not kept)
	exclusive bool             // the kernel's RDMA netns mode is exclusive
	softRoCE  bool             // a softRoCE node: each rail's device is its pod's rxe

	mu         sync.Mutex
	containers func(sandbox string) []nri.ContainerRecord // nil without NRI
}

func newRailReadiness(reports *podreport.Reporter, leases func() []ipam.Lease, held *podinfo.DRAHeld, mode rdma.NetnsMode, softRoCE bool) *railReadiness {
	var next service.Reporter
	if reports != nil {
		next = reports
	}
	placed := &placements{next: next, bySandbox: map[string]service.Attached{}, at: map[string]time.Time{}, now: time.Now}
	return &railReadiness{placed: placed, sink: reports,
		leases: leases, held: held, exclusive: mode == rdma.NetnsExclusive, softRoCE: softRoCE}
}

// reporter is what the service reports to: the placements, then the API.
func (r *railReadiness) reporter() service.Reporter { return r.placed }

// useNRI makes the checks read the NRI plugin's container records.
func (r *railReadiness) useNRI(p *nri.Plugin) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.containers = p.SandboxContainers
}

// start runs the tracker until ctx ends (nil when the checks are off).
func (r *railReadiness) start(ctx context.Context, cfg *config.Config, inv *inventory.Inventory, m *metrics.Metrics, log *slog.Logger) (*readiness.Tracker, error) {
	if !cfg.Readiness.On() {
		return nil, nil
	}
	checker, err := readiness.NewChecker(cfg.Root, cfg.Readiness.ProcRoot)
	if err != nil {
		return nil, err
	}
	opt := readiness.Options{Checker: checker, Pods: func() []readiness.Pod { return r.pods(inv.Machine()) },
		Interval: cfg.Readiness.IntervalDuration, Log: log}
	if r.sink != nil {
		opt.Sink = r.sink
	}
	if m != nil {
		opt.Registerer = m.Registry
	}
	t, err := readiness.NewTracker(opt)
	if err != nil {
		return nil, err
	}
	go t.Run(ctx)
	return t, nil
}

// pods are the pods holding rail interfaces with a NIC, from the leases,
// and the pods holding NICs of DRA NIC drivers (both kinds of rails for a
// pod that has both).
func (r *railReadiness) pods(m *topology.Machine) []readiness.Pod {
	r.mu.Lock()
	containers := r.containers
	r.mu.Unlock()
	var out []readiness.Pod
	index := map[string]int{}
	var gids []int // by pod
	leased := map[string]bool{}
	defer func() { r.placed.forgetUnleased(leased) }()
	for _, l := range r.leases() {
		leased[l.Sandbox] = true
		if len(l.NICs) == 0 {
			continue
		}
		i, ok := index[l.Sandbox]
		if !ok {
			i = len(out)
			index[l.Sandbox] = i
			p := readiness.Pod{Namespace: l.PodNamespace, Name: l.PodName, UID: l.PodUID, Sandbox: l.Sandbox}
			var recs []nri.ContainerRecord
			if containers != nil {
				recs = containers(l.Sandbox)
			}
			p.Containers = recordsToContainers(recs)
			p.GPUs = r.placed.gpus(l.Sandbox, m)
			out = append(out, p)
			gids = append(gids, gidIndexOf(recs))
		}
		out[i].Rails = append(out[i].Rails, r.rail(l, m, gids[i]))
	}
	return r.withDRAPods(out, index, containers, m)
}

// rail is one lease as the checks see it.
func (r *railReadiness) rail(l ipam.Lease, m *topology.Machine, gidIndex int) readiness.Rail {
	mode := api.Mode(l.Mode)
	rail := readiness.Rail{Netns: l.Netns, IfName: l.IfName, Addresses: []netip.Prefix{l.Address}, Mode: mode,
		Exclusive: r.exclusive && mode.Exclusive(), GIDIndex: gidIndex, Placed: r.placed.of(l.Sandbox, l.IfName)}
	_, isVF := m.VFByPCI(l.NICs[0])
	switch nic, ok := m.NICByName(l.NICs[0]); {
	case ok:
		rail.Device, rail.Port, rail.LinkLayer = nic.RDMADevice(), nic.PortNum(), nic.LinkLayer
	case isVF || mode == api.ModeVF:
		// A vf-mode lease names its VF by PCI address. A VF the host shows
		// no RDMA device of (one its driver has none of, like igbvf, or one
		// exclusive mode moved into the pod) has the RDMA device placement
		// gave it, if any; its address is no RDMA device name.
		if rail.Placed.NIC != nil && rail.Placed.NIC.RDMADevice != "" {
			rail.Device, rail.Port = topology.ParseTarget(rail.Placed.NIC.RDMADevice)
		}
	default:
		rail.Device, rail.Port = topology.ParseTarget(l.NICs[0])
	}
	if rail.Placed.NIC != nil && rail.Placed.NIC.LinkLayer != "" {
		rail.LinkLayer = rail.Placed.NIC.LinkLayer // as placed, not as it is now
	}
	if r.softRoCE {
		// The pod's RDMA device is the rxe made on its interface (port 1,
		// RoCE), whatever NIC the interface came from.
		rail.Device, rail.Port, rail.LinkLayer = rdma.SoftRoCEName(l.Sandbox, l.IfName), 1, topology.Ethernet
		rail.Exclusive = false
	}
	return rail
}

// gidIndexOf is the GID index the pod's containers were given (the first
// that has one).
func gidIndexOf(recs []nri.ContainerRecord) int {
	for _, rec := range recs {
		if rec.GIDIndex >= 0 {
			return rec.GIDIndex
		}
	}
	return -1
}

func recordsToContainers(recs []nri.ContainerRecord) []readiness.Container {
	out := make([]readiness.Container, 0, len(recs))
	for _, rec := range recs {
		c := readiness.Container{Name: rec.Name, Pid: rec.Pid, Memlock: rec.Memlock}
		for _, d := range rec.Devices {
			c.Devices = append(c.Devices, readiness.Device{Path: d.Path, Major: d.Major, Minor: d.Minor})
		}
		for _, d := range rec.DriverDevices {
			c.DriverDevices = append(c.DriverDevices, readiness.DriverDevice{
				Device: readiness.Device{Path: d.Path, Major: d.Major, Minor: d.Minor}, NIC: d.NIC,
				Claim: readiness.DRAClaim{Driver: d.Driver, Claim: d.Claim}})
		}
		out = append(out, c)
	}
	return out
}

// placements remembers what placement said about each attachment (the
// service reports it once, at ADD) and passes every report on.
type placements struct {
	next service.Reporter // nil: nobody else

	mu        sync.Mutex
	bySandbox map[string]service.Attached // the sandbox's attachments, merged
	at        map[string]time.Time        // when each sandbox was last attached
	now       func() time.Time
}

// placementGrace is how long a sandbox's placement is kept without a lease
// (an Attached report comes right after its lease is written; a sandbox
// whose leases went without a DEL, released by GC, is forgotten after it).
const placementGrace = time.Minute

var _ service.Reporter = (*placements)(nil)

func (p *placements) Attached(a service.Attached) {
	p.mu.Lock()
	prev, ok := p.bySandbox[a.Sandbox]
	if ok {
		a.Interfaces = append(keepOthers(prev.Interfaces, a.Interfaces), a.Interfaces...)
	}
	p.bySandbox[a.Sandbox] = a
	p.at[a.Sandbox] = p.now()
	p.mu.Unlock()
	if p.next != nil {
		p.next.Attached(a)
	}
}

func (p *placements) Refused(f service.Refused) {
	if p.next != nil {
		p.next.Refused(f)
	}
}

func (p *placements) Released(d service.Released) {
	p.mu.Lock()
	if a, ok := p.bySandbox[d.Sandbox]; ok {
		var gone []service.AttachedInterface
		for _, i := range d.Interfaces {
			gone = append(gone, service.AttachedInterface{PlanInterface: api.PlanInterface{Name: i.Name}})
		}
		a.Interfaces = keepOthers(a.Interfaces, gone)
		if len(a.Interfaces) == 0 {
			delete(p.bySandbox, d.Sandbox)
			delete(p.at, d.Sandbox)
		} else {
			p.bySandbox[d.Sandbox] = a
		}
	}
	p.mu.Unlock()
	if p.next != nil {
		p.next.Released(d)
	}
}

// forgetUnleased drops the placements of sandboxes that hold no lease,
// once they are older than placementGrace.
func (p *placements) forgetUnleased(leased map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for sandbox, at := range p.at {
		if !leased[sandbox] && p.now().Sub(at) > placementGrace {
			delete(p.bySandbox, sandbox)
			delete(p.at, sandbox)
		}
	}
}

// keepOthers drops from list the interfaces named in drop.
func keepOthers(list, drop []service.AttachedInterface) []service.AttachedInterface {
	var out []service.AttachedInterface
	for _, i := range list {
		named := false
		for _, d := range drop {
			named = named || d.Name == i.Name
		}
		if !named {
			out = append(out, i)
		}
	}
	return out
}

// of is why placement chose an interface's NIC (empty when raild restarted
// since the ADD).
func (p *placements) of(sandbox, ifname string) readiness.Placement {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.bySandbox[sandbox]
	for _, i := range a.Interfaces {
		if i.Name != ifname {
			continue
		}
		pl := readiness.Placement{Network: a.Network, NIC: i.NIC, Distance: i.Distance, Reason: i.Reason}
		for _, d := range i.Distances {
			pl.Distances = append(pl.Distances, api.GPUDistance{GPU: d.GPU, Class: d.Class, Chose: d.Chose})
		}
		return pl
	}
	return readiness.Placement{}
}

// gpus are the GPUs placement saw for a sandbox, with their PCI addresses.
func (p *placements) gpus(sandbox string, m *topology.Machine) []api.PodGPU {
	p.mu.Lock()
	defer p.mu.Unlock()
	var indices []int
	for _, i := range p.bySandbox[sandbox].Interfaces {
		for _, d := range i.Distances {
			if !slices.Contains(indices, d.GPU) {
				indices = append(indices, d.GPU)
			}
		}
	}
	return podGPUs(indices, m)
}
