package attach

import (
	"net/netip"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
)

// Mode is how a NIC reaches the pod: the project's one attach mode type.
type Mode = api.Mode

const (
	// ModeMove moves the NIC's netdev itself into the pod.
	ModeMove = api.ModeMove
	// ModeMacvlan gives the pod a macvlan child of the NIC's netdev (RoCE).
	ModeMacvlan = api.ModeMacvlan
	// ModeIPVLAN gives the pod an ipvlan (L2) child of the NIC's netdev
	// (RoCE): the port's MAC, the pod's own address.
	ModeIPVLAN = api.ModeIPVLAN
	// ModeIPoIB gives the pod an IPoIB child of the NIC's InfiniBand netdev.
	ModeIPoIB = api.ModeIPoIB
	// ModeVF moves an SR-IOV VF's netdev into the pod, as ModeMove does,
	// after setting what Spec.VF asks through its PF.
	ModeVF = api.ModeVF
)

// movesNetdev reports whether mode m moves the NIC's own netdev into the
// pod (move, vf) rather than creating a child of it.
func movesNetdev(m Mode) bool { return m == ModeMove || m == ModeVF }

// Route is one route the pod interface gets. A zero GW makes it a
// link-scoped (directly connected) route.
type Route struct {
	Dst netip.Prefix
	GW  netip.Addr
}

// Spec describes one pod interface. Fields that do not apply to Mode are
// ignored, except MAC, which only macvlan can honour and is refused
// elsewhere.
type Spec struct {
	Mode Mode
	// Parent is the host netdev of the NIC: moved itself in move mode (in
	// vf mode the VF's netdev), the parent of the child in macvlan and
	// ipoib mode.
	Parent string
	// Name is the pod-side interface name (rail0, net1, net1-1).
	Name string
	// Addresses are host addresses with their prefix, e.g. 10.10.0.5/24.
	Addresses []netip.Prefix
	// Routes are added as given; nothing else (no default route unless
	// listed). The kernel's own prefix routes for Addresses stay in main.
	Routes []Route
	// MTU of the pod interface; 0 keeps the device's (or the parent's).
	MTU int
	// Table > 0 enables policy routing: Routes and each address's subnet
	// route go into this table, plus a "from <addr> lookup <Table>" rule per
	// address. 253, 254 and 255 (default, main, local) are refused.
	Table int
	// ArpTuning sets arp_ignore=1 and arp_announce=2 on the interface, for
	// several rails in one subnet.
	ArpTuning bool
	// MacvlanMode is bridge (default), private, vepa or passthru.
	MacvlanMode string
	// PKey is the IPoIB partition key; 0 uses the parent's.
	PKey uint16
	// IPoIBMode is "datagram" (default) or "connected".
	IPoIBMode string
	// MAC is an optional MAC address for the macvlan child.
	MAC string
	// RDMADevice is the NIC's RDMA device (mlx5_0; in vf mode the VF's
	// own, mlx5_12). In move and vf mode, RDMANetns exclusive, it moves into
	// the pod with the netdev and back.
	RDMADevice string
	// Owner, when set, is recorded in the interface's alias: the lease it
	// belongs to, so raild can rebuild its leases from the pods.
	Owner Owner
	// VF is what vf mode needs (and only vf mode takes): the VF's PF and
	// index, and what to set through the PF.
	VF *VF
	// SoftRoCE, when set, is the name of the Soft-RoCE device (rxe) to
	// create on the pod interface inside the pod netns once it is there
	// (a node in softRoCE mode); Detach deletes it. "" creates none.
	SoftRoCE string
	// RDMANetns is the RDMA subsystem's netns mode. In exclusive mode
	// macvlan and ipoib attachments that name an RDMADevice are refused,
	// since a pod cannot reach the parent's RDMA device in that mode.
	RDMANetns rdma.NetnsMode
}

// Result describes the pod interface after Attach.
type Result struct {
	Name  string
	MAC   string
	MTU   int
	Index int
}

// movesRDMADevice reports whether attaching s moves an RDMA device too.
func (s Spec) movesRDMADevice() bool {
	return movesNetdev(s.Mode) && s.RDMANetns == rdma.NetnsExclusive && s.RDMADevice != ""
}
