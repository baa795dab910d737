package api

// CheckStatus is the outcome of one readiness check.
type CheckStatus string

// The outcomes of a readiness check: a skipped check could not be made
// (a container not started yet, or one that exited) and neither passes
// nor fails the pod.
const (
	CheckPass CheckStatus = "pass"
	CheckFail CheckStatus = "fail"
	CheckSkip CheckStatus = "skip"
)

// ReadinessCheck is one check of a pod's RDMA path, made from the node
// without traffic.
type ReadinessCheck struct {
	// Name is the check: interface, address, port, link-layer, gid,
	// rdma-netns, device-nodes, memlock.
	Name string `json:"name"`
	// Subject is what was checked: a pod interface (rail0) or a container
	// ("container app").
	Subject string      `json:"subject"`
	Status  CheckStatus `json:"status"`
	// Reason is the condition reason a failure gives (PortNotActive, ...).
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// PodReport is `raild doctor --pod`: one pod's RDMA path as raild sees it.
type PodReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	Sandbox   string `json:"sandbox"`
	// GPUs are the pod's GPUs placement used, and where they came from.
	GPUs       []PodGPU       `json:"gpus,omitempty"`
	GPUSource  string         `json:"gpuSource,omitempty"`
	Interfaces []PodInterface `json:"interfaces"`
	Containers []PodContainer `json:"containers,omitempty"`
	// Ready is the rail.dev/RDMAReady condition raild computes: every
	// check passed (or was skipped).
	Ready  bool             `json:"ready"`
	Checks []ReadinessCheck `json:"checks"`
}

// PodGPU is one GPU of a pod.
type PodGPU struct {
	Index int    `json:"index"`
	PCI   string `json:"pci,omitempty"`
}

// PodInterface is one rail interface of a pod.
type PodInterface struct {
	Name      string   `json:"name"`
	Network   string   `json:"network,omitempty"`
	Mode      Mode     `json:"mode"`
	NIC       *NIC     `json:"nic,omitempty"`
	Addresses []string `json:"addresses"`
	// Distance and Reason are why placement chose the NIC (empty when
	// raild restarted since the ADD: leases keep the NIC, not the why).
	Distance  string        `json:"distance,omitempty"`
	Reason    string        `json:"reason,omitempty"`
	Distances []GPUDistance `json:"distances,omitempty"`
	PortState string        `json:"portState,omitempty"`
	// GID is the port's GID holding the pod's address (RoCE), at GIDIndex.
	GID      string `json:"gid,omitempty"`
	GIDIndex *int   `json:"gidIndex,omitempty"`
	// ExclusiveRDMA: the RDMA device moved into the pod's netns with the
	// netdev (exclusive RDMA netns mode).
	ExclusiveRDMA bool `json:"exclusiveRDMA,omitempty"`
	// DRA is the claim whose DRA NIC driver moved the NIC into the pod
	// (nil: a rail interface, placed and attached by rail).
	DRA *PodDRAClaim `json:"dra,omitempty"`
}

// PodDRAClaim is where a pod's NIC came from when a DRA NIC driver
// (DRANet) gave it.
type PodDRAClaim struct {
	Driver string `json:"driver"`
	Claim  string `json:"claim"`
	Device string `json:"device,omitempty"`
}

// GPUDistance is a NIC's distance class to one of the pod's GPUs, and
// whether that GPU chose it.
type GPUDistance struct {
	GPU   int    `json:"gpu"`
	Class string `json:"class"`
	Chose bool   `json:"chose,omitempty"`
}

// PodContainer is what one container really holds, read from its own view
// (/proc/<pid>).
type PodContainer struct {
	Name string `json:"name"`
	Pid  int    `json:"pid,omitempty"`
	// Injected are the device nodes raild injected; Present those the
	// container's root really has.
	Injected []string `json:"injected,omitempty"`
	// DriverInjected are the device nodes DRA NIC drivers inject for the
	// container's claims (not raild).
	DriverInjected []string `json:"driverInjected,omitempty"`
	Present        []string `json:"present,omitempty"`
	// Memlock is the container's Max locked memory (soft/hard, bytes or
	// "unlimited"); MemlockWanted what raild set.
	Memlock       string `json:"memlock,omitempty"`
	MemlockWanted uint64 `json:"memlockWanted,omitempty"`
	// Env are the NCCL_* and UCX_* variables the container's init process
	// sees.
	Env []string `json:"env,omitempty"`
}
