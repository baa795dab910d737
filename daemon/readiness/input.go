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
	// GPUs are the pod's GPUs placement used (doctor only).
	GPUs []api.PodGPU
	// Containers are the containers that asked for RDMA (raild injected
	// device nodes into them).
	Containers []Container
}

// Key names the pod (namespace/name).
func (p Pod) Key() string { return p.Namespace + "/" + p.Name }

// Rail is one rail interface of a pod.
type Rail struct {
	Netns     string // path of the pod's netns
	IfName    string // the interface's name in the pod
	Addresses []netip.Prefix
	Device    string // RDMA device (mlx5_0)
	Port      int    // its port, from 1
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
	// Devices are the device nodes raild injected.
	Devices []Device
	// Memlock is the RLIMIT_MEMLOCK raild asked for (0: none).
	Memlock uint64
}

// Device is one injected device node.
type Device struct {
	Path         string // /dev/infiniband/uverbs0
	Major, Minor int64
}
