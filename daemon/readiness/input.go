// Package readiness checks, from the node and without traffic, that a pod's
// RDMA path is what raild arranged: each rail interface in the pod's netns,
// up, with its lease address; its RDMA port ACTIVE with the right link
// layer; for RoCE the GID of the pod's address at the index the containers
// were given; in exclusive RDMA netns mode the RDMA device in the pod's
// netns; and each container that asked for RDMA really holding the device
// nodes and the memlock limit, read from its own view (/proc/<pid>). The
// Tracker turns the checks into the pod condition rail.dev/RDMAReady.
package readiness

import (
	"net/netip"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// Pod is what the checks need about one pod. raild fills it from its leases
// and its NRI records; another source (a DRA driver's allocation) can fill
// it the same way.
type Pod struct {
	Namespace string
	Name      string
	UID       string
	Sandbox   string
	Rails     []Rail
	// GPUs are the pod's GPUs placement used (doctor only), and where
	// they came from.
	GPUs      []api.PodGPU
	GPUSource string
	// Containers are the containers that asked for RDMA (raild injected
	// device nodes into them).
	Containers []Container
}

// Key names the pod (namespace/name).
func (p Pod) Key() string { return p.Namespace + "/" + p.Name }

// Rail is one rail interface of a pod: a lease's, or a NIC a DRA NIC
// driver moved into the pod (DRA set).
type Rail struct {
	Netns     string // path of the pod's netns
	IfName    string // the interface's name in the pod
	Addresses []netip.Prefix
	// Match says how Addresses are compared with the interface's: with
	// their prefix length (a lease's), or the address alone (a DRA
	// driver's slice lists bare addresses).
	Match AddressMatch
	// GIDAddress, when valid, is the one address whose GID the containers'
	// index names (a DRA NIC's: the one its env was worked out from); the
	// zero value: every address of the rail.
	GIDAddress netip.Addr
	// DRA says which claim of which driver gave the NIC; nil for a rail
	// lease.
	DRA *DRAClaim
	// PCI is the netdev's PCI function (DRA rails): the interface is found
	// by it when the pod knows it under another name (a claim that renames
	// it).
	PCI    string
	Device string // RDMA device (mlx5_0)
	Port   int    // its port, from 1
	// LinkLayer is the port's link layer when it was placed.
	LinkLayer topology.LinkLayer
	Mode      api.Mode
	// Exclusive: the RDMA device moved into the pod's netns with the netdev
	// (exclusive RDMA netns mode, move or vf).
	Exclusive bool
	// GIDIndex is the GID index the containers were given
	// (NCCL_IB_GID_INDEX); -1 when none was.
	GIDIndex int
	// Placed says why placement chose the NIC (doctor only; empty when
	// raild restarted since the ADD).
	Placed Placement
}

// AddressMatch is how a rail's addresses are compared with those the
// interface holds.
type AddressMatch uint8

const (
	// MatchPrefix: each address with its prefix length (a lease's).
	MatchPrefix AddressMatch = iota
	// MatchAddressOnly: each address alone, whatever its prefix length
	// (unknown: the driver's slice lists bare addresses).
	MatchAddressOnly
)

// DRAClaim is where a DRA rail's NIC came from.
type DRAClaim struct {
	Driver string // dra.net
	Claim  string // namespace/name
	Device string // the driver's device (driver/pool/device)
}

// Placement is why a rail's NIC was chosen, for doctor.
type Placement struct {
	Network   string
	NIC       *api.NIC
	Distance  string
	Reason    string
	Distances []api.GPUDistance
}

// Container is one container that asked for RDMA.
type Container struct {
	Name string
	Pid  int // its init process, 0 while it has not started
	// Start is that process's start time, pinned when it started
	// (process.Pin): a pid whose process has another start time is not
	// the container's and is never read; 0 (not pinned, or stopped): its
	// process is gone.
	Start uint64
	// Devices are the device nodes raild injected.
	Devices []Device
	// DriverDevices are the device nodes a DRA NIC driver injects for the
	// container's claims (not raild's; the container must hold them all
	// the same, or RDMA falls back to TCP).
	DriverDevices []DriverDevice
	// Memlock is the RLIMIT_MEMLOCK raild asked for (0: none).
	Memlock uint64
}

// Device is one injected device node.
type Device struct {
	Path         string // /dev/infiniband/uverbs0
	Major, Minor int64
}

// DriverDevice is a device node a DRA NIC driver injects for a claim.
type DriverDevice struct {
	Device
	NIC   string // the port it opens (mlx5_0)
	Claim DRAClaim
}
