package nri

import (
	"net/netip"
	"strconv"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// podEnv is what a pod's leases give each of its containers' env, worked
// out once per pod off the hot path into its record (podrecord.go) from
// the leases, the NICs' link layers and their ports' GID and P_Key tables.
// An empty value is a variable left unset.
type podEnv struct {
	gidIndex   string // NCCL_IB_GID_INDEX: the GID index of the pod's address on every RoCE NIC
	pkeyIndex  string // NCCL_IB_PKEY: the P_Key index of the pod's partition on every IPoIB NIC
	addrFamily string // NCCL_IB_ADDR_FAMILY: AF_INET6 when the RoCE addresses are IPv6
	addrRange  string // NCCL_IB_ADDR_RANGE: the subnet of the RoCE addresses, when one
	socketIf   string // NCCL_SOCKET_IFNAME: "=" and the pod's primary interface
	// softRoCE: the pod's devices are Soft-RoCE (rxe) ones rail made in
	// the pod (UCX_UD_ETH_DGID_CHECK=n).
	softRoCE bool
	// retry is true when a table lookup missed (the kernel publishes a GID
	// shortly after the address is added): the next CreateContainer works
	// it out once more, and keeps that answer.
	retry bool
}

// portTables reads the index of a GID or a P_Key in a port's tables
// (topology.PortReader on the node).
type portTables interface {
	GIDIndex(nic string, port int, addr netip.Addr) (int, error)
	PKeyIndex(nic string, port int, pkey uint16) (int, error)
}

// unreadablePorts answers every lookup with why the tables cannot be read:
// the variables that need no table are still set.
type unreadablePorts struct{ err error }

func (u unreadablePorts) GIDIndex(string, int, netip.Addr) (int, error) { return 0, u.err }
func (u unreadablePorts) PKeyIndex(string, int, uint16) (int, error)    { return 0, u.err }

// leaseEnv works out a pod's podEnv. What a NIC needs follows its link
// layer, whatever the mode that attached it: every lease on a RoCE NIC
// (move, macvlan, vf) has the GID of its address looked up, every lease
// with a P_Key on an InfiniBand NIC (an IPoIB child) the index of its
// partition. NCCL takes one GID index and one P_Key index for all its
// HCAs: an index is set only when every NIC of the pod agrees on it.
//
// A DRA NIC driver's NICs (dra) count as RoCE NICs of the pod with the
// address their slice lists (no subnet: a slice gives none); one the slice
// lists no address for leaves the GID index unknown, so it is not set.
func leaseEnv(leases []ipam.Lease, dra []podinfo.DRANIC, nics func(ipam.Lease, string) (*nicDevices, bool), ports portTables,
	warn func(msg string, args ...any)) *podEnv {
	pe := &podEnv{}
	var gid, pkey agreedIndex
	var subnet agreedPrefix
	primary := ""
	for _, l := range leases {
		if primary == "" {
			primary = l.PrimaryIf
		}
		for _, name := range l.Holds() {
			nd, ok := nics(l, name)
			if !ok || nd.port == 0 {
				continue
			}
			pe.softRoCE = pe.softRoCE || nd.soft
			switch nd.linkLayer {
			case topology.Ethernet:
				subnet.add(l.Address.Masked())
				gid.add(ports.GIDIndex(nd.device, nd.port, l.Address.Addr()))
			case topology.InfiniBand:
				if l.PKey != 0 {
					pkey.add(ports.PKeyIndex(nd.device, nd.port, l.PKey))
				}
			}
		}
	}
	for _, n := range dra {
		if n.LinkLayer != topology.Ethernet {
			continue
		}
		if addr, ok := n.GIDAddress(); ok {
			gid.add(ports.GIDIndex(n.RDMADevice, n.Port, addr))
		} else {
			gid.unknown = true
		}
	}
	pe.gidIndex = gid.value(envNCCLGIDIndex, warn)
	pe.pkeyIndex = pkey.value(envNCCLPKey, warn)
	pe.retry = gid.missed || pkey.missed
	if p, ok := subnet.value(); ok {
		pe.addrRange = p.String()
		if !p.Addr().Is4() {
			pe.addrFamily = "AF_INET6"
		}
	} else if subnet.n > 0 && subnet.allV6 {
		pe.addrFamily = "AF_INET6"
	}
	if len(leases) > 0 || len(dra) > 0 {
		if primary == "" {
			primary = api.DefaultPrimaryIfName
		}
		pe.socketIf = "=" + primary
	}
	return pe
}

// agreedIndex is one table index every NIC of a pod must agree on.
type agreedIndex struct {
	idx      int
	n        int
	conflict bool
	missed   bool
	unknown  bool // a NIC whose index cannot be looked up (no address)
}

func (a *agreedIndex) add(idx int, err error) {
	if err != nil {
		a.missed = true
		return
	}
	if a.n > 0 && idx != a.idx {
		a.conflict = true
	}
	a.idx = idx
	a.n++
}

// value is the index as the variable carries it; "" when a NIC missed it
// or the NICs disagree (logged: NCCL then picks by itself).
func (a agreedIndex) value(key string, warn func(msg string, args ...any)) string {
	if a.conflict {
		warn("the pod's NICs hold its addresses at different table indices: " + key + " not set")
	}
	if a.n == 0 || a.conflict || a.missed || a.unknown {
		return ""
	}
	return strconv.Itoa(a.idx)
}

// agreedPrefix is the one subnet of a pod's RoCE addresses.
type agreedPrefix struct {
	p        netip.Prefix
	n        int
	conflict bool
	allV6    bool
}

func (a *agreedPrefix) add(p netip.Prefix) {
	if a.n == 0 {
		a.allV6 = true
	}
	a.allV6 = a.allV6 && !p.Addr().Is4()
	if a.n > 0 && p != a.p {
		a.conflict = true
	}
	a.p = p
	a.n++
}

func (a agreedPrefix) value() (netip.Prefix, bool) {
	return a.p, a.n > 0 && !a.conflict && a.p.IsValid()
}
