package ipam

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/railcni/rail/ipam/store"
)

// Key identifies a lease: the sandbox (CNI container ID) and the pod
// interface name. It is the lease store's key.
type Key = store.Key

// Lease is one address given to one pod interface, as the lease store
// keeps it.
type Lease = store.Lease

// Request asks for a lease for one pod interface.
type Request struct {
	Sandbox   string
	IfName    string // in the pod
	CNIIfName string // CNI_IFNAME
	Network   string
	Pool      string

	NICs      []string // port names
	Mode      string
	VF        string // vf mode: the VF's PCI address (NICs: its PF's port)
	PKey      uint16 // IPoIB child's P_Key (0: none)
	PrimaryIf string // the pod's primary interface, when known
	MAC       string // vf mode: the admin MAC asked ("" the lease's own)

	PodNamespace string
	PodName      string
	PodUID       string
	Netns        string
}

// Key returns the key the request's lease will have.
func (r Request) Key() Key { return Key{Sandbox: r.Sandbox, IfName: r.IfName} }

func (r Request) validate(at string) error {
	switch {
	case r.Sandbox == "":
		return fmt.Errorf("%s.sandbox: empty: want the sandbox (CNI container) ID", at)
	case r.IfName == "":
		return fmt.Errorf("%s.ifname: empty: want the pod interface name, e.g. rail0", at)
	}
	return nil
}

// answers reports whether an existing lease answers r (ADD re-entrant).
func answers(l Lease, r Request) bool {
	return l.Pool == r.Pool && l.Network == r.Network && l.CNIIfName == r.CNIIfName
}

func newLease(r Request, p *Pool, addr netip.Addr, now time.Time) Lease {
	return Lease{
		Sandbox: r.Sandbox, IfName: r.IfName, CNIIfName: r.CNIIfName, Network: r.Network, Pool: r.Pool,
		Address: netip.PrefixFrom(addr, p.Prefix.Bits()), Gateway: p.Gateway,
		NICs: slices.Clone(r.NICs), Mode: r.Mode, VF: r.VF, PKey: r.PKey, PrimaryIf: r.PrimaryIf, MAC: r.MAC,
		PodNamespace: r.PodNamespace, PodName: r.PodName, PodUID: r.PodUID, Netns: r.Netns,
		Created: now,
	}
}

func compareLeases(a, b Lease) int {
	return cmp.Or(strings.Compare(a.Sandbox, b.Sandbox), strings.Compare(a.IfName, b.IfName))
}
