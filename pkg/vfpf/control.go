// Package vfpf is vf mode's steps through a VF's PF: what a PF's driver
// is asked (Control), a VF's state as its PF reports it (State), and the
// settings steps (VLAN, spoofchk, link state, rates, trust), each with its
// inverse; the reset of what a record says was changed, and the clean
// reset of a VF no lease owns. pkg/attach runs the steps in its session
// and keeps their inverses on its undo list; the steps that also touch
// the VF's netdev (its MACs, an InfiniBand VF's GUIDs and rebind) are
// pkg/vfnetdev's, the record in the netdev's alias pkg/attach's.
package vfpf

import (
	"errors"
	"net"

	"github.com/railcni/rail/pkg/api"
)

// ErrNotOnPF marks a VF its PF does not report (VFs removed, wrong index).
var ErrNotOnPF = errors.New("the PF does not report this VF")

// State is a VF's administrative state as its PF reports it
// (IFLA_VF_INFO): what attach records before changing it, and restores.
type State struct {
	MAC       net.HardwareAddr
	VLAN      int
	QoS       int
	VLANProto uint16
	Spoofchk  bool
	Trust     bool
	LinkState api.VFLinkState
	MinTxRate uint32
	MaxTxRate uint32
	// NodeGUID and PortGUID are an InfiniBand VF's GUIDs as the PF reports
	// them (IFLA_VF_IB_NODE_GUID/PORT_GUID, kernels from 5.9 with a driver
	// that reports them); nil when it does not.
	NodeGUID, PortGUID net.HardwareAddr
}

// Control is what the vf attach sequence asks of a PF's driver: a VF's
// admin state and each of its settings. The production one (pkg/attach)
// sends netlink requests in the host netns; tests use one that records
// the calls.
type Control interface {
	VFState(pf string, vf int) (State, error)
	SetVFMAC(pf string, vf int, mac net.HardwareAddr) error
	SetVFVLAN(pf string, vf, vlan, qos int, proto uint16) error
	SetVFSpoofchk(pf string, vf int, on bool) error
	SetVFTrust(pf string, vf int, on bool) error
	SetVFLinkState(pf string, vf int, state api.VFLinkState) error
	SetVFRate(pf string, vf int, minMbps, maxMbps uint32) error
	// SetVFGUID sets an InfiniBand VF's node GUID, then its port GUID; the
	// VF takes them only once its driver is rebound.
	SetVFGUID(pf string, vf int, node, port net.HardwareAddr) error
}

// VF names a VF: its PF's netdev in the host netns and its index there
// (the PF's virtfn<Index>).
type VF struct {
	PF    string
	Index int
}
