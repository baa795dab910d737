package api

import (
	"fmt"
	"strings"

	"github.com/railcni/rail/pkg/topology"
)

// Mode is how a pod gets its NIC: the one typed value for it across the
// plugins, raild and pkg/attach.
type Mode string

// Attach modes. ModeIPAM is rail-ipam's: an address, no NIC.
const (
	ModeMove    Mode = "move"
	ModeMacvlan Mode = "macvlan"
	// ModeIPVLAN gives the pod an ipvlan (L2) child of the NIC's netdev:
	// the port's MAC, the pod's own address (bonds with LACP and fabrics
	// that refuse a second MAC on a port).
	ModeIPVLAN Mode = "ipvlan"
	ModeIPoIB  Mode = "ipoib"
	ModeIPAM   Mode = "ipam"
	// ModeVF gives a pod an SR-IOV VF of the PF closest to its GPUs,
	// configured through its PF (VLAN, MAC, spoofchk, trust, rates) and
	// moved in; DEL resets the PF-side settings.
	ModeVF Mode = "vf"
)

// AttachModes are the modes of the rail plugin (every mode but ModeIPAM).
func AttachModes() []Mode { return []Mode{ModeMove, ModeMacvlan, ModeIPVLAN, ModeIPoIB, ModeVF} }

// Valid reports whether m is one of the attach modes or ModeIPAM.
func (m Mode) Valid() bool { return m == ModeIPAM || m.Attaches() }

// Attaches reports whether m puts a NIC into the pod.
func (m Mode) Attaches() bool {
	for _, a := range AttachModes() {
		if m == a {
			return true
		}
	}
	return false
}

// Exclusive reports whether a NIC attached in this mode belongs to one
// pod (in vf mode the NIC is the VF, one pod's; its PF serves many).
func (m Mode) Exclusive() bool { return m == ModeMove || m == ModeVF }

// LinkLayer is the link layer the mode needs of its NIC ("" for any): a
// macvlan or ipvlan child is Ethernet (RoCE), an IPoIB child needs
// InfiniBand.
func (m Mode) LinkLayer() topology.LinkLayer {
	switch m {
	case ModeMacvlan, ModeIPVLAN:
		return topology.Ethernet
	case ModeIPoIB:
		return topology.InfiniBand
	}
	return ""
}

// ModeList joins modes for error messages: "move, macvlan, ipoib".
func ModeList(modes []Mode) string {
	parts := make([]string, len(modes))
	for i, m := range modes {
		parts[i] = string(m)
	}
	return strings.Join(parts, ", ")
}

// SelectorLinkLayer combines a mode with the link layer a selector asks
// for: the mode's own wins when the selector is silent; a contradiction is
// an error that names both.
func SelectorLinkLayer(m Mode, selected topology.LinkLayer) (topology.LinkLayer, error) {
	implied := m.LinkLayer()
	switch {
	case selected == "":
		return implied, nil
	case implied == "" || implied.Matches(selected):
		return selected, nil
	}
	return "", fmt.Errorf("linkLayer %s does not fit mode %s, which needs %s NICs%s", selected, m, implied, m.Instead(selected))
}

// SharesPort reports whether m gives the pod a child of the NIC's netdev
// (macvlan, ipvlan, ipoib): many pods per port.
func (m Mode) SharesPort() bool { return m == ModeMacvlan || m == ModeIPVLAN || m == ModeIPoIB }

// Instead names the mode that shares a port of link layer ll when m cannot:
// ", use mode ipoib for InfiniBand ports" for macvlan and ipvlan ("" else).
func (m Mode) Instead(ll topology.LinkLayer) string {
	if (m == ModeMacvlan || m == ModeIPVLAN) && ll == topology.InfiniBand {
		return ": use mode " + string(ModeIPoIB) + " for InfiniBand ports"
	}
	return ""
}
