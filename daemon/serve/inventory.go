package serve

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/vishvananda/netns"

	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/statedir"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology"
)

// rescanInterval is the periodic rescan of the whole node beside link
// events, the safety net for what no link event tells (discovery takes
// 1-2 ms on the largest built-in machine).
const rescanInterval = 30 * time.Second

// watchNode keeps the inventory current from host link events and a timer
// until ctx ends, waking the readers that act on a new machine (the device
// plugin's ListAndWatch) and logging what changed. Every reader reads the
// machine itself from the inventory's current snapshot. Link events of
// netdevs that are no NIC's (pods' veths, bridges, other plugins'
// macvlans in pods) cost raild their reading; a NIC's event reads its
// RDMA device again, not the node.
func watchNode(ctx context.Context, inv *inventory.Inventory, saveTo string, log *slog.Logger, changed ...func()) {
	w := inventory.Watch{
		Interval: rescanInterval,
		Settle:   100 * time.Millisecond,
		FollowUp: 2 * time.Second,
		Published: func(s *inventory.Snapshot) {
			for _, wake := range changed {
				wake()
			}
			saveRecords(inv, saveTo, log)
			reportChanges(s, log)
			stats := inv.Stats()
			log.Debug("node rescanned", "version", s.Version, "cause", s.Cause, "nics", len(s.Machine.NICs), "inPod", s.InPod,
				"fullRescans", stats.FullRescans, "deviceReads", stats.DeviceReads, "portReads", stats.PortReads, "linkEvents", stats.Events, "ignored", stats.Ignored)
		},
		Failed: func(err error) { log.Warn("node rescan failed; the last snapshot stays", "error", err) },
		FilterFailed: func(err error) {
			log.Warn("the kernel filter on the link-event socket cannot be set: every link event is read (rail_link_filter_active 0)", "error", err)
		},
	}
	if events, err := inventory.LinkEvents(netns.None()); err != nil {
		log.Warn("no link events: the node is rescanned on the timer only", "every", rescanInterval, "error", err)
	} else {
		w.Events = events
	}
	go inv.Run(ctx, w)
}

// saveRecords writes the snapshot's NIC records to statedir.RecordsFile; a failure
// costs only the memory of NICs moved into pods before the next save.
func saveRecords(inv *inventory.Inventory, path string, log *slog.Logger) {
	if err := inv.SaveRecords(path); err != nil {
		log.Warn("cannot save the NICs' host records", "error", err)
	}
}

// adoptLeases makes the inventory follow the leases on disk before
// anything reads it: NICs they hold stay known while they sit in pods,
// from the records an earlier raild saved when this one starts with them
// already moved. (The service's own view replaces this once it runs.) The
// merged snapshot is saved at once, so every NIC has a record before the
// first lease of this run can move it.
func adoptLeases(inv *inventory.Inventory, alloc *ipam.Allocator, stateDir string, log *slog.Logger) {
	if err := inv.Restore(statedir.RecordsFile(stateDir)); err != nil {
		log.Warn("NIC records not used", "error", err)
	}
	inv.SetHolders(func() map[string]string { return leaseHolders(alloc.Leases()) })
	snap, err := inv.Rescan("leases loaded")
	if err != nil {
		log.Warn("node rescan failed; the last snapshot stays", "error", err)
		return
	}
	saveRecords(inv, statedir.RecordsFile(stateDir), log)
	if len(snap.InPod) > 0 {
		log.Info("NICs in pods", "inPod", snap.InPod)
	}
}

// leaseHolders names the pod holding each leased NIC.
func leaseHolders(leases []ipam.Lease) map[string]string {
	out := map[string]string{}
	for _, l := range leases {
		pod := l.PodNamespace + "/" + l.PodName
		if l.PodName == "" {
			pod = "sandbox " + l.Sandbox
		}
		for _, nic := range l.Holds() {
			out[nic] = pod
		}
	}
	return out
}

// nodeState is the inventory's current snapshot as metrics export it.
func nodeState(inv *inventory.Inventory, leaked func() []topology.LeakedVF) metrics.NodeSource {
	return func() metrics.NodeState {
		snap := inv.Current()
		stats := inv.Stats()
		state := metrics.NodeState{Version: snap.Version, NICs: make([]metrics.NICState, 0, len(snap.Machine.NICs)),
			LinkFilter: stats.LinkFilter, LinkFilterFailures: stats.LinkFilterFailures}
		for _, nic := range snap.Machine.NICs {
			_, inPod := snap.InPod[nic.Name]
			state.NICs = append(state.NICs, metrics.NICState{Name: nic.Name, Active: nic.State == topology.PortActive, InPod: inPod})
		}
		state.PFs = pfStates(snap, leaked())
		return state
	}
}

// reportChanges logs each NIC whose port state changed, as a warning when
// a pod holds it (the pod keeps it; placement stops handing it out).
func reportChanges(s *inventory.Snapshot, log *slog.Logger) {
	for _, c := range s.Changes {
		attrs := []any{"nic", c.NIC, "from", c.From, "to", c.To, "version", s.Version, "cause", s.Cause}
		pods, held := s.Holders[c.NIC]
		switch {
		case held && c.To != topology.PortActive:
			log.Warn("a NIC held by a pod is not ACTIVE: the pod keeps it, no new pod gets it", append(attrs, "pods", pods)...)
		case held:
			log.Info("NIC state changed", append(attrs, "pods", pods)...)
		default:
			log.Info("NIC state changed", attrs...)
		}
	}
}

// pfStates is each SR-IOV PF of the snapshot with its VFs enabled, at
// most, held by leases and found leaked (raild's last VF sweep).
func pfStates(snap *inventory.Snapshot, leaked []topology.LeakedVF) []metrics.PFState {
	out := make([]metrics.PFState, 0, len(snap.Machine.PFs))
	for _, pf := range snap.Machine.PFs {
		st := metrics.PFState{PCI: pf.PCI, Total: pf.TotalVFs, Enabled: pf.NumVFs}
		if nic, ok := snap.Machine.PFNIC(pf); ok {
			st.NIC = nic.Name
		}
		for _, vf := range pf.VFs {
			if _, held := vf.HeldBy(snap.Holders); held {
				st.Used++
			}
			if slices.ContainsFunc(leaked, func(l topology.LeakedVF) bool { return l.PCI == vf.PCI }) {
				st.Leaked++
			}
		}
		out = append(out, st)
	}
	return out
}
