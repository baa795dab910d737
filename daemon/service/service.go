// Package service is raild's core: it places pods on NICs, leases their
// addresses and answers for both. The socket server, the NRI plugin and the
// CLI all go through it.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// PodDevices answers which device IDs of the given resources a pod holds
// (the kubelet PodResources API).
type PodDevices interface {
	PodDevices(ctx context.Context, namespace, name string, resources []string) ([]string, error)
}

// Options wires a Service.
type Options struct {
	Machine *topology.Machine
	// Live, when set, is the node as it is now (the inventory's current
	// snapshot); every placement and plan reads it instead of Machine.
	Live  func() *topology.Machine
	Rails map[string]int
	Alloc *ipam.Allocator
	Pods  PodDevices // nil: GPUs come only from annotations and cni-args
	// PodMeta reads annotations the runtime did not pass (nil: only the
	// runtime's annotations count).
	PodMeta      PodMeta
	GPUResources []string
	// Policy picks the pods that get rail interfaces in chained mode
	// (empty: api.PolicyGPUOrAnnotated).
	Policy  api.AttachPolicy
	Metrics *metrics.Metrics // nil: not measured
	Log     *slog.Logger
	// NetnsExists tells whether a sandbox's netns is still there; nil uses os.Stat.
	NetnsExists func(path string) bool
}

// Service is safe for concurrent use.
type Service struct {
	opt   Options
	alloc *ipam.Allocator
	log   *slog.Logger

	mu        sync.Mutex
	usage     *placement.Usage
	bySandbox map[string][]api.Lease   // what NRI reads on its hot path
	inflight  map[string]chan struct{} // attachment key -> done
}

// New builds the service from the leases on disk and releases those whose
// sandbox netns is gone.
func New(opt Options) (*Service, error) {
	if opt.Machine == nil || opt.Alloc == nil {
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
	s := &Service{
		opt:       opt,
		alloc:     opt.Alloc,
		log:       opt.Log,
		usage:     placement.NewUsage(),
		bySandbox: map[string][]api.Lease{},
		inflight:  map[string]chan struct{}{},
	}
	for _, l := range opt.Alloc.Leases() {
		s.track(l)
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
	s.forget(released, "netns gone")
	return released, nil
}

// Machine is the node's topology as it is now.
func (s *Service) Machine() *topology.Machine {
	if s.opt.Live != nil {
		if m := s.opt.Live(); m != nil {
			return m
		}
	}
	return s.opt.Machine
}

// node is the placement view of the node now.
func (s *Service) node() *placement.Node {
	return &placement.Node{Machine: s.Machine(), Rails: s.opt.Rails}
}

// Topology is the report of `raild topo`.
// It is the live machine, with the pods holding each NIC in use.
func (s *Service) Topology() topology.Report {
	r := s.Machine().Report()
	if holders := s.NICHolders(); len(holders) > 0 {
		r.Holders = holders
	}
	return r
}

// NICHolders names, for each NIC a lease holds, the pod holding it
// (derived from the leases; the inventory keeps such NICs known).
func (s *Service) NICHolders() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage.Holders()
}

func (s *Service) track(l ipam.Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trackLocked(l)
}

func (s *Service) trackLocked(l ipam.Lease) {
	key := leaseKey(l.Sandbox, l.IfName)
	for _, nic := range l.NICs {
		s.usage.Add(nic, key, l.Sandbox, podName(l.PodNamespace, l.PodName, l.Sandbox), api.Mode(l.Mode))
	}
	s.bySandbox[l.Sandbox] = append(withoutKey(s.bySandbox[l.Sandbox], l.IfName), toAPILease(l))
}

// forget drops released leases from the in-memory views and counts them.
func (s *Service) forget(released []ipam.Lease, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range released {
		key := leaseKey(l.Sandbox, l.IfName)
		for _, nic := range l.NICs {
			s.usage.Remove(nic, key)
		}
		s.bySandbox[l.Sandbox] = withoutKey(s.bySandbox[l.Sandbox], l.IfName)
		if len(s.bySandbox[l.Sandbox]) == 0 {
			delete(s.bySandbox, l.Sandbox)
		}
		if s.opt.Metrics != nil {
			s.opt.Metrics.Releases.WithLabelValues(l.Pool).Inc()
		}
		s.log.Info("lease released", "sandbox", l.Sandbox, "ifname", l.IfName, "pod", podName(l.PodNamespace, l.PodName, ""),
			"address", l.Address.String(), "nics", l.NICs, "why", why)
	}
}

// SandboxLeases returns the leases of a sandbox from memory (NRI hot path).
func (s *Service) SandboxLeases(sandbox string) []api.Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	leases := append([]api.Lease(nil), s.bySandbox[sandbox]...)
	sort.Slice(leases, func(i, j int) bool { return lessIfName(leases[i].IfName, leases[j].IfName) })
	return leases
}

// NICMovedTo returns the sandbox that holds nic in move mode, from memory
// (NRI hot path).
func (s *Service) NICMovedTo(nic string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage.MovedTo(nic)
}

func leaseKey(sandbox, ifname string) string { return sandbox + "/" + ifname }

func podName(ns, name, fallback string) string {
	if name == "" {
		return fallback
	}
	return ns + "/" + name
}

func withoutKey(leases []api.Lease, ifname string) []api.Lease {
	out := leases[:0:0]
	for _, l := range leases {
		if l.IfName != ifname {
			out = append(out, l)
		}
	}
	return out
}
