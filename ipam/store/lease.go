package store

import (
	"encoding/binary"
	"net/netip"
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

	// NICs are the ports the lease holds by name (mlx5_0, mlx4_0:2): in
	// vf mode the PF's, which placement chose and the VF is counted on.
	NICs []string `json:"nics,omitempty"`
	Mode string   `json:"mode,omitempty"`
	// VF is, in vf mode, the PCI address of the VF the lease holds (the
	// PF's port is in NICs); empty in every other mode.
	VF string `json:"vf,omitempty"`
	// PKey is the IPoIB child's P_Key (0: the parent's or not IPoIB);
	// PrimaryIf the pod's primary interface when the plugin named it.
	PKey      uint16 `json:"pkey,omitempty"`
	PrimaryIf string `json:"primaryIf,omitempty"`
	// MAC is, in vf mode, the admin MAC the netconf or the runtime asked
	// for the VF ("": the lease's own, which raild derives from its key).
	MAC string `json:"mac,omitempty"`

	PodNamespace string `json:"podNamespace,omitempty"`
	PodName      string `json:"podName,omitempty"`
	PodUID       string `json:"podUID,omitempty"`
	Netns        string `json:"netns,omitempty"`

	Created time.Time `json:"created"`
}

// Holds is what the lease gives its pod: its VF (by PCI address) in vf
// mode, else its NICs.
func (l Lease) Holds() []string {
	if l.VF != "" {
		return []string{l.VF}
	}
	return l.NICs
}

// Key returns the lease's key.
func (l Lease) Key() Key { return Key{Sandbox: l.Sandbox, IfName: l.IfName} }

// Cooldown is a released address waiting before it is handed out again.
type Cooldown struct {
	Addr     netip.Addr
	Pool     string
	Released time.Time
}

// coolRecord is a Cooldown on disk (its address is the record's key).
type coolRecord struct {
	Pool     string    `json:"pool"`
	Released time.Time `json:"released"`
}

// bytes is the bbolt key: the length-prefixed sandbox then the ifname, so no
// separator can be confused with content.
func (k Key) bytes() []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(k.Sandbox)+len(k.IfName))
	b = binary.AppendUvarint(b, uint64(len(k.Sandbox)))
	b = append(b, k.Sandbox...)
	return append(b, k.IfName...)
}
