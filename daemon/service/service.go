// Package service is raild's core: it places pods on NICs, leases their
// addresses and answers for both. The socket server, the NRI plugin and the
// CLI all go through it.
package service

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/sriov"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// Options wires a Service.
type Options struct {
	// Machine is the node as it is now (the inventory's current snapshot);
	// every placement and plan reads it.
	Machine func() *topology.Machine
	Rails   map[string]int
	Alloc   *ipam.Allocator
	// GPUs says which GPUs the kubelet gave a pod (PodResources, DRA
	// through the ResourceSlices); nil or without a kubelet: GPUs come only
	// from annotations and cni-args. A pod holding DRA GPUs the source
	// cannot map (no API server) fails ADD unless unresolvedGPUs is ignore.
	GPUs *podinfo.GPUSource
	// PodMeta reads annotations the runtime did not pass (nil: only the
	// runtime's annotations count).
	PodMeta PodMeta
	// Policy picks the pods that get rail interfaces in chained mode
	// (empty: api.PolicyGPUOrAnnotated).
	Policy api.AttachPolicy
	// RDMANetnsMode is the kernel's RDMA netns mode. In exclusive mode
	// moving a port's netdev moves its whole RDMA device (placement then
	// keeps the other ports of a moved device from other pods).
	RDMANetnsMode rdma.NetnsMode
	Metrics       *metrics.Metrics // nil: not measured
	Log           *slog.Logger
	// NetnsExists tells whether a sandbox's netns is still there; nil uses os.Stat.
	NetnsExists func(path string) bool
	// Reporter, when set, tells the cluster what raild did for each pod
	// (Events, network-status); nil: nothing is reported.
	Reporter Reporter
	// Guard says which NICs are the node's own (the inventory); nil: what
	// sysfs shows of the machine.
	Guard placement.Guard
	// Limits are the NICs and modes this node serves (config, node class).
	Limits placement.Limits
	// SoftRoCE: the node is in softRoCE mode; each planned interface then
	// names the rxe the plugin makes on it in the pod (rdma.SoftRoCEName
	// of its lease).
	SoftRoCE bool
	// DRAHeld are the NICs DRA NIC drivers gave the node's pods: placement
	// never takes them, and ADD records its own pod's (nil: none known).
	DRAHeld *podinfo.DRAHeld
	// DRAClaims are the Rail devices a pod's prepared DRA claims hold
	// (nil: Rail is no DRA driver here); a pod holding some gets exactly
	// those at ADD (draclaims.go).
	DRAClaims DRAClaims
	// HostVFs resets VFs back from dead pods and reads VFs' admin MACs
	// with every reconcile (nil: neither, as on a node without SR-IOV).
	HostVFs sriov.HostVFs
	// OwnPFs are the PFs whose VFs only raild hands out (sriov.ownPFs):
	// the sweep resets a VF of theirs with an admin MAC no lease holds
	// (empty: such VFs are only reported).
	OwnPFs []string
	// Rescan reads the node again (nil: nothing): after the VF sweep
	// renamed VFs back, before any plan names their netdevs.
	Rescan func(cause string)
	// ReadVFs reads these VFs (PCI addresses, by their PF's) again now
	// (nil: nothing): a DEL moved them back to the host before it released
	// their leases, and the next ADD must find them there, not wait for
	// the inventory's link events.
	ReadVFs func(cause string, vfs map[string][]string)
	// ReadNICsBack reads the ports of these RDMA devices' NICs again now
	// (nil: nothing): a DEL moved their netdevs back to the host before it
	// released their move-mode leases, and the next ADD must find them
	// there, not wait for the netdevs' link events.
	ReadNICsBack func(cause string, devices []string)
}

// Service is safe for concurrent use. Which NIC is held by whom, and which
// leases a sandbox has, is the allocator's: the service keeps no copy.
type Service struct {
	opt   Options
	alloc *ipam.Allocator
	log   *slog.Logger

	mu       sync.Mutex
	inflight map[string]chan struct{} // attachment key -> done
	sweep    *sriov.Sweep             // vf mode's, nil without HostVFs
	// returns is read-held while released VFs and NICs moved back are
	// read again in the background (readReturned); an allocation takes it
	// to place on what those reads found.
	returns sync.RWMutex
}

// New builds the service from the leases on disk and releases those whose
// sandbox netns is gone.
func New(opt Options) (*Service, error) {
	if opt.Machine == nil || opt.Machine() == nil || opt.Alloc == nil {
		return nil, fmt.Errorf("service needs a machine and an allocator")
	}
	if opt.Policy == "" {
		opt.Policy = api.PolicyGPUOrAnnotated
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.NetnsExists == nil {
		opt.NetnsExists = func(path string) bool { _, err := os.Stat(path); return err == nil }
	}
	s := &Service{opt: opt, alloc: opt.Alloc, log: opt.Log, inflight: map[string]chan struct{}{}}
	if opt.HostVFs != nil {
		s.sweep = s.vfSweep()
	}
	if err := s.Reconcile(); err != nil {
		return nil, err
	}
	return s, nil
}

// Reconcile releases leases whose recorded netns no longer exists: at
// start, with every CNI GC, and on raild's timer. A DEL that could not
// reach raild (it succeeds, as DEL must) leaves such a lease behind, and
// the GC of some main plugins never reaches their IPAM plugin (rail-ipam).
func (s *Service) Reconcile() error {
	_, err := s.reconcile()
	return err
}

func (s *Service) reconcile() ([]ipam.Lease, error) {
	released, err := s.alloc.ReleaseIf(func(l ipam.Lease) bool {
		return l.Netns != "" && !s.opt.NetnsExists(l.Netns)
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile leases: %w", err)
	}
	s.logReleased(released, "netns gone")
	if s.sweep != nil {
		if err := s.sweep.Run(); err != nil {
			s.log.Warn("VF sweep failed", "error", err)
		}
	}
	return released, nil
}

// Machine is the node's topology as it is now.
func (s *Service) Machine() *topology.Machine { return s.opt.Machine() }

// node is the placement view of the node now.
func (s *Service) node() *placement.Node {
	return &placement.Node{Machine: s.Machine(), Rails: s.opt.Rails, RDMANetns: s.opt.RDMANetnsMode,
		Guard: s.opt.Guard, Limits: s.opt.Limits}
}

// Topology is the report of `raild topo`.
// It is the live machine, with the pods holding each NIC in use and the
// node's own NICs.
func (s *Service) Topology() topology.Report {
	m := s.Machine()
	r := m.Report()
	if s.opt.Guard != nil {
		r = m.ReportWith(s.opt.Guard.Protected())
	}
	if holders := s.NICHolders(); len(holders) > 0 {
		r.Holders = holders
	}
	r.LeakedVFs = s.LeakedVFs()
	return r
}

// NICHolders names, for each NIC a lease holds, the pod holding it
// (derived from the leases; the inventory keeps such NICs known).
func (s *Service) NICHolders() map[string]string {
	var holders map[string]string
	s.alloc.ReadNICs(func(use ipam.NICUse) { holders = placement.Holders(leaseUse{use}) })
	return holders
}

// NICUses calls fn for each pod interface a lease holds a NIC for (a
// vf-mode lease: its VF's PF's port, the VF in the holder), as placement
// sees them.
func (s *Service) NICUses(fn func(nic string, h placement.Holder)) {
	s.alloc.ReadNICs(func(use ipam.NICUse) { leaseUse{use}.Range(fn) })
}

// logReleased counts and logs released leases.
func (s *Service) logReleased(released []ipam.Lease, why string) {
	for _, l := range released {
		if s.opt.Metrics != nil {
			s.opt.Metrics.Releases.WithLabelValues(l.Pool).Inc()
		}
		s.log.Info("lease released", "sandbox", l.Sandbox, "ifname", l.IfName, "pod", podName(l.PodNamespace, l.PodName, ""),
			"address", l.Address.String(), "nics", l.NICs, "why", why)
	}
}

// SandboxLeases returns the leases of a sandbox from the allocator's
// memory, typed, in interface order (NRI hot path). Their NICs are the
// allocator's own lists: read them, never change them.
func (s *Service) SandboxLeases(sandbox string) []ipam.Lease {
	leases := s.readSandbox(sandbox)
	slices.SortFunc(leases, func(a, b ipam.Lease) int { return compareIfNames(a.IfName, b.IfName) })
	return leases
}

// readSandbox is the sandbox's leases in the allocator's order.
func (s *Service) readSandbox(sandbox string) []ipam.Lease {
	var leases []ipam.Lease
	s.alloc.ReadSandbox(sandbox, func(l *ipam.Lease) { leases = append(leases, *l) })
	return leases
}

// holdsAttachment tells whether a sandbox's leases hold one of the
// attachment's.
func holdsAttachment(leases []ipam.Lease, ifname, network string) bool {
	return slices.ContainsFunc(leases, func(l ipam.Lease) bool { return l.CNIIfName == ifname && l.Network == network })
}

// otherLeases collects the leases of an attachment's sandbox but its own
// (those come from the allocation's answer) in a placement's critical
// section (each copied: it outlives the lock).
func otherLeases(use ipam.NICUse, req api.AllocateRequest) []ipam.Lease {
	var leases []ipam.Lease
	use.Sandbox(req.Sandbox, func(l *ipam.Lease) {
		if l.CNIIfName != req.CNIIfName || l.Network != req.Network {
			leases = append(leases, *l)
		}
	})
	return leases
}

// NICMovedTo returns the sandbox that holds nic in move mode, from the
// allocator's memory (NRI hot path).
func (s *Service) NICMovedTo(nic string) (sandbox string, moved bool) {
	s.alloc.ReadNICs(func(use ipam.NICUse) {
		use.Modes(nic, func(mode string, _ int) bool {
			if api.Mode(mode).Exclusive() {
				use.HoldingIn(nic, mode, func(l *ipam.Lease) bool {
					if l.VF != "" {
						return true // a VF's lease names its PF's port, which stays on the host
					}
					sandbox, moved = l.Sandbox, true
					return false
				})
			}
			return !moved
		})
	})
	return sandbox, moved
}

func podName(ns, name, fallback string) string {
	if name == "" {
		return fallback
	}
	return ns + "/" + name
}
