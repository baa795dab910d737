package ipam

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Key identifies a lease: the sandbox (CNI container ID) and the pod
// interface name (rail0, net1, eth0...).
type Key struct {
	Sandbox string `json:"sandbox"`
	IfName  string `json:"ifname"`
}

// Lease is one address given to one pod interface. Its JSON form is also
// its on-disk form.
type Lease struct {
	Sandbox   string `json:"sandbox"`
	IfName    string `json:"ifname"`
	CNIIfName string `json:"attachment"` // CNI_IFNAME of the call that made it (IfName: the name in the pod)
	Network   string `json:"network"`
	Pool      string `json:"pool"`

	Address netip.Prefix `json:"address"` // the address with the pool's prefix length
	Gateway netip.Addr   `json:"gateway,omitzero"`

	NICs []string `json:"nics,omitempty"`
	Mode string   `json:"mode,omitempty"`

	PodNamespace string `json:"podNamespace,omitempty"`
	PodName      string `json:"podName,omitempty"`
	PodUID       string `json:"podUID,omitempty"`
	Netns        string `json:"netns,omitempty"`

	Created time.Time `json:"created"`
}

// Key returns the lease's key.
func (l Lease) Key() Key { return Key{Sandbox: l.Sandbox, IfName: l.IfName} }

// Request asks for a lease for one pod interface.
type Request struct {
	Sandbox   string
	IfName    string // in the pod
	CNIIfName string // CNI_IFNAME
	Network   string
	Pool      string

	NICs []string
	Mode string

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

// matches reports whether an existing lease answers r (ADD re-entrant).
func (l Lease) matches(r Request) bool {
	return l.Pool == r.Pool && l.Network == r.Network && l.CNIIfName == r.CNIIfName
}

func newLease(r Request, p *Pool, addr netip.Addr, now time.Time) Lease {
	return Lease{
		Sandbox: r.Sandbox, IfName: r.IfName, CNIIfName: r.CNIIfName, Network: r.Network, Pool: r.Pool,
		Address: netip.PrefixFrom(addr, p.Prefix.Bits()), Gateway: p.Gateway,
		NICs: slices.Clone(r.NICs), Mode: r.Mode,
		PodNamespace: r.PodNamespace, PodName: r.PodName, PodUID: r.PodUID, Netns: r.Netns,
		Created: now,
	}
}

// bytes is the bbolt key: the length-prefixed sandbox then the ifname, so no
// separator can be confused with content.
func (k Key) bytes() []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(k.Sandbox)+len(k.IfName))
	b = binary.AppendUvarint(b, uint64(len(k.Sandbox)))
	b = append(b, k.Sandbox...)
	return append(b, k.IfName...)
}

func compareLeases(a, b Lease) int {
	return cmp.Or(strings.Compare(a.Sandbox, b.Sandbox), strings.Compare(a.IfName, b.IfName))
}
