package serve

import (
	"context"
	"log/slog"
	"net/netip"

	"github.com/railcni/rail/daemon/attached"
	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/draplugin"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podreport"
	"github.com/railcni/rail/daemon/readiness"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// railReadiness is what the rail.dev/RDMAReady checks read: what
// placement said about each attachment (for doctor), the leases, the DRA
// NIC table, the NRI plugin's container records. serve builds it once,
// with all of them, before the tracker starts.
type railReadiness struct {
	placed     *attached.Placements
	leases     func() []ipam.Lease
	held       *podinfo.DRAHeld                           // the NICs DRA NIC drivers gave pods (nil: not kept)
	containers func(sandbox string) []nri.ContainerRecord // nil without NRI
	rdmaNetns  rdma.NetnsMode                             // the kernel's RDMA netns mode
	softRoCE   bool                                       // a softRoCE node: each rail's device is its pod's rxe
}

// readinessSink is where the checks' conditions go: the API server's pod
// status (reports) and Rail's DRA driver, for its claims' status (each
// nil when off); nil when neither.
func readinessSink(reports *podreport.Reporter, dra *draplugin.Plugin) readiness.Sink {
	var s sinks
	if reports != nil {
		s = append(s, reports)
	}
	if dra != nil {
		s = append(s, dra)
	}
	switch len(s) {
	case 0:
		return nil
	case 1:
		return s[0]
	}
	return s
}

// sinks hands a condition to each sink.
type sinks []readiness.Sink

func (s sinks) RDMAReady(c readiness.Condition) {
	for _, sink := range s {
		sink.RDMAReady(c)
	}
}

// start runs the tracker until ctx ends (nil when the checks are off);
// sink gets the conditions (nil: none).
func (r *railReadiness) start(ctx context.Context, cfg *config.Config, inv *inventory.Inventory, m *metrics.Metrics, sink readiness.Sink,
	log *slog.Logger) (*readiness.Tracker, error) {
	if !cfg.Readiness.On() {
		return nil, nil
	}
	checker, err := readiness.NewChecker(cfg.Root, cfg.Readiness.ProcRoot)
	if err != nil {
		return nil, err
	}
	opt := readiness.Options{Checker: checker, Pods: func() []readiness.Pod { return r.pods(inv.Machine()) },
		Interval: cfg.Readiness.IntervalDuration, Sink: sink, Log: log}
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
	containers := r.containers
	var out []readiness.Pod
	index := map[string]int{}
	var gids []int // by pod
	leased := map[string]bool{}
	defer func() { r.placed.ForgetUnleased(leased) }()
	for _, l := range r.leases() {
		leased[l.Sandbox] = true
		if len(l.NICs) == 0 && l.VF == "" {
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
			p.GPUs = podGPUs(r.placed.GPUs(l.Sandbox), m)
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
		Exclusive: r.rdmaNetns == rdma.NetnsExclusive && mode.Exclusive(), GIDIndex: gidIndex, Placed: r.placed.Of(l.Sandbox, l.IfName)}
	switch nic, ok := m.NICByName(l.VF); {
	case l.VF != "" && ok:
		// The VF's own RDMA device, as the host shows it.
		rail.Device, rail.Port, rail.LinkLayer = nic.RDMADevice(), nic.PortNum(), nic.LinkLayer
	case l.VF != "":
		// A VF the host shows no RDMA device of (one its driver has none
		// of, like igbvf, or one exclusive mode moved into the pod) has the
		// RDMA device placement gave it, if any; its PF's port is not the
		// pod's device.
		if rail.Placed.NIC != nil && rail.Placed.NIC.RDMADevice != "" {
			rail.Device, rail.Port = topology.ParseTarget(rail.Placed.NIC.RDMADevice)
		}
	case len(l.NICs) == 0:
	default:
		if nic, ok := m.NICByName(l.NICs[0]); ok {
			rail.Device, rail.Port, rail.LinkLayer = nic.RDMADevice(), nic.PortNum(), nic.LinkLayer
			break
		}
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
		c := readiness.Container{Name: rec.Name, Pid: rec.Pid, Start: rec.Start, Memlock: rec.Memlock}
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
