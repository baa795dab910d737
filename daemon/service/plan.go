package service

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// policyTableBase numbers the per-interface routing tables (per pod netns).
const policyTableBase = 100

// planOf is the plan of one attachment, built from every lease of its
// sandbox (this attachment's included) as one read or one allocation gave
// them: sorted once by interface name, the policy tables numbered across
// them, the attachment's own leases picked out.
func (s *Service) planOf(v *view, sandbox, ifname, network string, sandboxLeases []ipam.Lease) *api.Plan {
	slices.SortFunc(sandboxLeases, func(a, b ipam.Lease) int { return compareIfNames(a.IfName, b.IfName) })
	tables := policyTables(v, sandboxLeases)
	plan := &api.Plan{Sandbox: sandbox, CNIIfName: ifname, Network: network}
	for _, l := range sandboxLeases {
		if l.CNIIfName != ifname || l.Network != network {
			continue
		}
		if len(plan.Interfaces) == 0 {
			plan.Mode, plan.Netns = api.Mode(l.Mode), l.Netns
		}
		plan.Interfaces = append(plan.Interfaces, s.planInterface(v, l, tables[l.IfName]))
	}
	return plan
}

func (s *Service) planInterface(v *view, l ipam.Lease, table int) api.PlanInterface {
	iface := api.PlanInterface{Name: l.IfName, Pool: l.Pool, Table: table}
	addr := api.Address{CIDR: l.Address.String()}
	if l.Gateway.IsValid() {
		addr.Gateway = l.Gateway.String()
	}
	iface.Addresses = []api.Address{addr}
	if pool, ok := v.get(l.Pool); ok {
		iface.MTU = pool.Config.MTU
		for _, r := range pool.Config.Routes {
			iface.Routes = append(iface.Routes, api.Route{Dst: r.Dst, GW: r.GW})
		}
	}
	switch {
	case l.VF != "":
		iface.NIC, iface.VF = s.vfInfo(v, l)
	case len(l.NICs) == 0:
	default:
		iface.NIC = nicInfo(v.node, l.NICs[0])
	}
	if s.opt.SoftRoCE && len(l.Holds()) > 0 {
		iface.SoftRoCE = rdma.SoftRoCEName(l.Sandbox, l.IfName)
	}
	return iface
}

func nicInfo(node *placement.Node, name string) *api.NIC {
	nic, ok := node.Machine.NICByName(name)
	if !ok {
		dev, port := topology.ParseTarget(name)
		return &api.NIC{RDMADevice: dev, Port: port}
	}
	info := &api.NIC{RDMADevice: nic.RDMADevice(), Netdev: nic.Netdev, PCI: nic.PCI, UverbsName: nic.UverbsName,
		LinkLayer: nic.LinkLayer, Port: nic.PortNum()}
	if r, ok := node.Rails[nic.Name]; ok {
		info.Rail = &r
	}
	return info
}

// policyTables gives each rail interface of a sandbox its own routing table
// when several of them share a subnet, so replies leave where they came in;
// leases are every lease of the sandbox, sorted by interface name.
func policyTables(v *view, leases []ipam.Lease) map[string]int {
	bySubnet := map[string][]string{}
	for _, l := range leases {
		if len(l.Holds()) == 0 {
			continue
		}
		if pool, ok := v.get(l.Pool); ok {
			subnet := pool.Config.Subnet
			bySubnet[subnet] = append(bySubnet[subnet], l.IfName)
		}
	}
	tables := map[string]int{}
	for i, l := range leases {
		if pool, ok := v.get(l.Pool); ok && len(bySubnet[pool.Config.Subnet]) > 1 {
			tables[l.IfName] = policyTableBase + i
		}
	}
	return tables
}

// annotatePlan adds, for people, which GPUs chose each NIC and why.
func annotatePlan(plan *api.Plan, picks []placement.Pick) {
	for i, iface := range plan.Interfaces {
		if iface.NIC == nil {
			continue
		}
		for _, p := range picks {
			if p.NIC.RDMADevice() == iface.NIC.RDMADevice && p.NIC.PortNum() == iface.NIC.Port && p.NIC.Netdev == iface.NIC.Netdev {
				plan.Interfaces[i].GPUs = p.GPUs
				plan.Interfaces[i].Distance = placementClass(p)
				plan.Interfaces[i].Reason = p.Reason
			}
		}
	}
}

func sortedLeases(leases []ipam.Lease) []ipam.Lease {
	out := append([]ipam.Lease(nil), leases...)
	sort.Slice(out, func(i, j int) bool { return lessIfName(out[i].IfName, out[j].IfName) })
	return out
}

// lessIfName orders rail2 before rail10 and net1 before net1-1.
func lessIfName(a, b string) bool { return compareIfNames(a, b) < 0 }

// compareIfNames is lessIfName as a comparison (slices.SortFunc).
func compareIfNames(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

func toAPILease(l ipam.Lease) api.Lease {
	return api.Lease{Sandbox: l.Sandbox, IfName: l.IfName, CNIIfName: l.CNIIfName, Network: l.Network,
		Pool: l.Pool, Address: l.Address.String(), NICs: append([]string{}, l.NICs...), Mode: api.Mode(l.Mode), VF: l.VF,
		PodNamespace: l.PodNamespace, PodName: l.PodName, PodUID: l.PodUID, Created: l.Created.UTC().Format(time.RFC3339)}
}
