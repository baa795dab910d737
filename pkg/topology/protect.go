package topology

import (
	"strings"
)

// A NIC the node itself uses (its netdev carries the node's address or
// routes, or is part of a bond, bridge or other stack) is protected:
// placing it could cut the node off its network. sysfs tells the links
// (LinkProtection); addresses and routes come from netlink in the daemon,
// which adds its reasons to the same Protection.

// ProtectKind is one kind of reason a NIC is the node's own.
type ProtectKind string

// Reasons a NIC is protected.
const (
	ProtectDefaultRoute ProtectKind = "default-route" // its netdev carries the host's default route
	ProtectNodeIP       ProtectKind = "node-ip"       // its netdev carries the node's InternalIP
	ProtectAddress      ProtectKind = "host-address"  // a global address in the host netns
	ProtectRoute        ProtectKind = "host-route"    // a route in the host netns
	ProtectEnslaved     ProtectKind = "enslaved"      // a port of a bond, bridge, team or VRF
	ProtectUpper        ProtectKind = "upper"         // it has an upper device (VLAN, macvlan, ...)
	ProtectBondMaster   ProtectKind = "bond-master"   // it is a bond master
)

// ProtectReason is one reason, with what was found ("default via 10.0.0.1").
type ProtectReason struct {
	Kind   ProtectKind `json:"kind"`
	Detail string      `json:"detail"`
}

func (r ProtectReason) String() string {
	switch r.Kind {
	case ProtectDefaultRoute:
		return "carries the host's default route (" + r.Detail + ")"
	case ProtectNodeIP:
		return "carries the node's InternalIP " + r.Detail
	case ProtectAddress:
		return "carries the host address " + r.Detail
	case ProtectRoute:
		return "carries the host route " + r.Detail
	case ProtectEnslaved:
		return "enslaved to " + r.Detail
	case ProtectUpper:
		return "has the upper device(s) " + r.Detail
	case ProtectBondMaster:
		return "is a bond master over " + r.Detail
	}
	return string(r.Kind) + " " + r.Detail
}

// Protection is why a NIC is the node's own, and what rail may still do
// with it. The zero value is a NIC rail may use in every mode.
type Protection struct {
	Reasons []ProtectReason `json:"reasons"`
	// LAG is a RoCE LAG device (mlx5_bond_N) whose netdev is its bond
	// master: rail may add child interfaces on the bond (macvlan), never
	// move it.
	LAG bool `json:"lag,omitempty"`
	// Shared is set when the config (allowProtectedNICs) names the NIC:
	// the admin shares it with pods in child modes; it is never moved.
	Shared bool `json:"shared,omitempty"`
}

// Protected reports whether there is any reason at all.
func (p Protection) Protected() bool { return len(p.Reasons) > 0 }

// Has reports whether one of the reasons is of kind k.
func (p Protection) Has(k ProtectKind) bool {
	for _, r := range p.Reasons {
		if r.Kind == k {
			return true
		}
	}
	return false
}

// Why joins the reasons for people.
func (p Protection) Why() string {
	parts := make([]string, len(p.Reasons))
	for i, r := range p.Reasons {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}

// Refusal says why a request may not place the NIC ("" when it may):
// move is a request that takes the netdev itself (move mode), otherwise
// a child mode (macvlan, ipoib) that adds an interface on it. move never
// takes a protected NIC; a child mode may use a RoCE LAG whose bond
// carries nothing of the host's, and any NIC the config shares.
func (p Protection) Refusal(move bool) string {
	switch {
	case !p.Protected():
		return ""
	case move && p.LAG:
		return "protected: RoCE LAG (" + p.Why() + "); move never takes the node's bond: use macvlan on it"
	case move:
		return "protected: " + p.Why() + "; move never takes the node's own NIC"
	case p.Shared || (p.LAG && p.onlyLAG()):
		return ""
	}
	return "protected: " + p.Why() + "; to share it with pods in macvlan/ipoib mode, name it in allowProtectedNICs"
}

// Use says for people what rail does with a protected NIC.
func (p Protection) Use() string {
	switch {
	case p.Refusal(false) != "":
		return "never placed"
	case p.Shared:
		return "shared in macvlan/ipoib (allowProtectedNICs), never moved"
	}
	return "RoCE LAG: macvlan on the bond only, never moved"
}

// onlyLAG reports whether every reason is the LAG's own bond.
func (p Protection) onlyLAG() bool {
	for _, r := range p.Reasons {
		if r.Kind != ProtectBondMaster {
			return false
		}
	}
	return true
}

// Add appends reasons (a Protection built from sysfs, then netlink).
func (p *Protection) Add(reasons ...ProtectReason) { p.Reasons = append(p.Reasons, reasons...) }

// LinkProtection is what sysfs alone says of a NIC: enslaved, with upper
// devices, or a bond master (a RoCE LAG when the NIC is mlx5_bond_N).
func (n NIC) LinkProtection() Protection {
	var p Protection
	l := n.Links
	if l == nil {
		return p
	}
	if l.Master != "" {
		detail := l.Master
		if l.MasterKind != "" {
			detail += " (" + l.MasterKind + ")"
		}
		p.Add(ProtectReason{Kind: ProtectEnslaved, Detail: detail})
	}
	if others := l.OtherUppers(); len(others) > 0 {
		p.Add(ProtectReason{Kind: ProtectUpper, Detail: strings.Join(others, ", ")})
	}
	if l.BondMaster {
		slaves := "no slaves"
		if len(l.BondSlaves) > 0 {
			slaves = strings.Join(l.BondSlaves, ", ")
		}
		p.Add(ProtectReason{Kind: ProtectBondMaster, Detail: slaves})
		p.LAG = strings.HasPrefix(n.RDMADevice(), "mlx5_bond_")
	}
	return p
}

// LinkProtection is every protected NIC's LinkProtection, by name.
func (m *Machine) LinkProtection() map[string]Protection {
	out := map[string]Protection{}
	for _, n := range m.NICs {
		if p := n.LinkProtection(); p.Protected() {
			out[n.Name] = p
		}
	}
	return out
}

// Unplaceable lists the NICs no mode may place (protected, neither shared
// nor a RoCE LAG on a bond of its own), with why: they carry no rail and
// are no GPU's affinity.
func Unplaceable(protected map[string]Protection) map[string]string {
	out := map[string]string{}
	for name, p := range protected {
		if why := p.Refusal(false); why != "" {
			out[name] = why
		}
	}
	return out
}
