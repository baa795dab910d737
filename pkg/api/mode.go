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
	ModeIPoIB   Mode = "ipoib"
	ModeIPAM    Mode = "ipam"
	// ModeVF gives a pod an SR-IOV VF of the PF closest to its GPUs,
	// configured through its PF (VLAN, MAC, spoofchk, trust, rates) and
	// moved in; DEL resets the PF-side settings.
	ModeVF Mode = "vf"
)

// AttachModes are the modes of the rail plugin (every mode but ModeIPAM).
func AttachModes() []Mode { return []Mode{ModeMove, ModeMacvlan, ModeIPoIB, ModeVF} }

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
// macvlan child is Ethernet (RoCE), an IPoIB child needs InfiniBand.
func (m Mode) LinkLayer() topology.LinkLayer {
	switch m {
	case ModeMacvlan:
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
	return "", fmt.Errorf("linkLayer %s does not fit mode %s, which needs %s NICs", selected, m, implied)
}
