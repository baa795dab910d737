// Package api holds the versioned wire types of raild's node socket and a
// small client with timeouts that maps failures to CNI error codes.
package api

import (
	"errors"

	"github.com/railcni/rail/pkg/topology"
)

// Version is the path prefix of every call: /v1/...
const Version = "v1"

// DefaultSocket is where raild listens and where the plugins dial.
const DefaultSocket = "/run/rail/raild.sock"

// Pod annotations understood by raild.
const (
	AnnotationGPUs    = "rail.dev/gpus"
	AnnotationPool    = "rail.dev/pool"
	AnnotationDevices = "rail.dev/devices"
)

// Selector narrows the NICs a network may use (NAD / conflist / cni-args).
type Selector struct {
	// NICs are RDMA device names (mlx5_0) or PCI addresses.
	NICs []string `json:"nics,omitempty"`
	// Device is the PCI address of the device the kubelet allocated the
	// pod through the NAD's resourceName (Multus' deviceID): that NIC, or
	// that SR-IOV VF, is the pod's. Errors about it name deviceID.
	Device string `json:"device,omitempty"`
	// Rail picks the NIC carrying this rail index.
	Rail *int `json:"rail,omitempty"`
	// LinkLayer narrows the NICs to one link layer; empty accepts both.
	LinkLayer topology.LinkLayer `json:"linkLayer,omitempty"`
}

// AllocateRequest asks raild for a plan for one CNI attachment
// (sandbox, CNI_IFNAME). It is re-entrant: the same key gets the same plan.
//
// Interface names have one Go name per side: CNIIfName is the CNI_IFNAME
// of the call (the runtime's name for the attachment; its JSON name stays
// "ifName"), IfName and PlanInterface.Name are the name of an interface
// inside the pod (rail0, ...).
type AllocateRequest struct {
	Sandbox      string            `json:"sandbox"`
	Netns        string            `json:"netns,omitempty"`
	CNIIfName    string            `json:"ifName"` // CNI_IFNAME`
	Network      string            `json:"network"`
	PodNamespace string            `json:"podNamespace,omitempty"`
	PodName      string            `json:"podName,omitempty"`
	PodUID       string            `json:"podUID,omitempty"`
	Mode         Mode              `json:"mode"`
	Pool         string            `json:"pool,omitempty"`
	Selector     Selector          `json:"selector,omitempty"`
	Annotations  map[string]string `json:"annotations"` // null: the runtime passed none (raild may ask the API server); {}: the pod has none
	CNIArgs      *CNIArgs          `json:"cniArgs,omitempty"`
	// Chained is true when rail runs after a primary plugin: interfaces are
	// then named IfPrefix+N; alone they are IfName, IfName-1, ...
	Chained  bool   `json:"chained,omitempty"`
	IfPrefix string `json:"ifPrefix,omitempty"`
	// MaxNICs caps how many NICs the attachment gets (0: one per chosen NIC).
	MaxNICs int `json:"maxNICs,omitempty"`
	// MaxDistance refuses NICs farther from the pod's GPUs than this class
	// (nil: any class; a pool's own bound still applies).
	MaxDistance *topology.Class `json:"maxDistance,omitempty"`
	// IfNames numbers chained interfaces by pick order (IfNamesOrder, the
	// default when empty) or by rail index (IfNamesRail).
	IfNames string `json:"ifNames,omitempty"`
	// UnresolvedGPUs says what a GPU the kubelet reports but raild cannot
	// resolve does: UnresolvedGPUsFail or UnresolvedGPUsIgnore (empty: the
	// explicit pool's setting, else fail).
	UnresolvedGPUs string `json:"unresolvedGPUs,omitempty"`
	// PrimaryIfName is the pod's primary interface when rail is chained:
	// the interface of prevResult inside the sandbox that is not rail's.
	// raild records it with the lease and gives it to the pod's containers
	// as NCCL_SOCKET_IFNAME. Empty: not known (a Multus delegate, an older
	// plugin); raild then uses DefaultPrimaryIfName.
	PrimaryIfName string `json:"primaryIfName,omitempty"`
	// PKey is the P_Key of the IPoIB child the plugin creates (0: the
	// parent's), recorded with the lease for NCCL_IB_PKEY.
	PKey uint16 `json:"pkey,omitempty"`
	// VFPerGPU, in vf mode, gives each GPU a VF of its own even where GPUs
	// share a PF (nil: the explicit pool's vfPerGPU, else one VF per PF).
	// Refused in another mode.
	VFPerGPU *bool `json:"vfPerGPU,omitempty"`
	// MAC, in vf mode, is the admin MAC the netconf or the runtime asks
	// for the VF ("": the lease's own, LeaseMAC). raild refuses one that
	// another VF of the node carries or another lease asked.
	MAC string `json:"mac,omitempty"`
}

// DefaultPrimaryIfName is the pod's primary interface when the plugin did
// not name one: the name the kubelet gives the cluster network, which is
// also the one Multus gives its cluster-default delegate.
const DefaultPrimaryIfName = "eth0"

// AttachmentRequest names one attachment, for release and check.
type AttachmentRequest struct {
	Sandbox   string `json:"sandbox"`
	CNIIfName string `json:"ifName"` // CNI_IFNAME
	Network   string `json:"network"`
}

// NIC describes the RDMA NIC behind one pod interface.
type NIC struct {
	RDMADevice string             `json:"rdmaDevice"`
	Netdev     string             `json:"netdev"`
	PCI        string             `json:"pci,omitempty"`
	UverbsName string             `json:"uverbs,omitempty"`
	Port       int                `json:"port,omitempty"`
	LinkLayer  topology.LinkLayer `json:"linkLayer,omitempty"`
	Rail       *int               `json:"rail,omitempty"`
}

// Address is an address in CIDR form with its optional gateway.
type Address struct {
	CIDR    string `json:"cidr"`
	Gateway string `json:"gateway,omitempty"`
}

// Route is a destination in CIDR form and an optional next hop.
type Route struct {
	Dst string `json:"dst"`
	GW  string `json:"gw,omitempty"`
}

// PlanInterface is one pod interface of a plan.
type PlanInterface struct {
	Name      string    `json:"name"`
	Pool      string    `json:"pool"`
	NIC       *NIC      `json:"nic,omitempty"`
	GPUs      []int     `json:"gpus,omitempty"`
	Distance  string    `json:"distance,omitempty"` // PIX, PXB, PHB, P2C, NODE, SYS
	Reason    string    `json:"reason,omitempty"`   // why this NIC, for people
	Addresses []Address `json:"addresses"`
	Routes    []Route   `json:"routes,omitempty"`
	MTU       int       `json:"mtu,omitempty"`
	// Table is the policy routing table for this interface (0: main), set
	// when several rail interfaces of the pod share a subnet.
	Table int `json:"table,omitempty"`
	// VF is the SR-IOV VF of a vf-mode interface (nil in other modes).
	VF *VF `json:"vf,omitempty"`
	// SoftRoCE is, on a node in softRoCE mode, the name of the Soft-RoCE
	// device (rxe) the plugin creates on this interface inside the pod's
	// netns (SoftRoCEName of the lease): the pod's RDMA device. "" on
	// other nodes.
	SoftRoCE string `json:"softRoCE,omitempty"`
}

// VF is the SR-IOV virtual function behind a vf-mode pod interface: where
// it sits, and the admin MAC its lease gives it.
type VF struct {
	PCI   string `json:"pci"`
	Index int    `json:"index"` // on its PF (virtfn<Index>)
	PFPCI string `json:"pfPCI"`
	// PF is the PF's netdev on the host ("" when it has none there: the
	// VF cannot be set up then).
	PF string `json:"pf,omitempty"`
	// Netdev is the VF's netdev on the host now: "" while it sits in a pod,
	// or when it is bound to vfio-pci or no driver.
	Netdev string `json:"netdev,omitempty"`
	Driver string `json:"driver,omitempty"`
	// GUID is, for a VF of an InfiniBand PF, the node and port GUID of the
	// lease (LeaseGUID), used unless the runtime names one
	// (infinibandGUID); "" for a RoCE VF.
	GUID       string `json:"guid,omitempty"`
	RDMADevice string `json:"rdmaDevice,omitempty"`
	// MAC is the admin MAC of the lease: the one the request asked, else
	// the lease's own (LeaseMAC).
	MAC string `json:"mac,omitempty"`
	// PoolConfig is the VF settings of the interface's pool (nil: none);
	// the netconf's own keys win over them, key by key (VFConfig.Over).
	PoolConfig *VFConfig `json:"poolConfig,omitempty"`
}

// Plan is raild's answer to allocate and check.
type Plan struct {
	Sandbox   string `json:"sandbox"`
	CNIIfName string `json:"ifName"` // CNI_IFNAME
	Network   string `json:"network"`
	Mode      Mode   `json:"mode"`
	// Netns is the sandbox netns recorded at ADD, for a DEL that comes without one.
	Netns      string          `json:"netns,omitempty"`
	Interfaces []PlanInterface `json:"interfaces"`
	// PassThrough is true when this pod gets no rail interface (chained
	// mode, the attach policy says no): nothing was recorded, and the
	// plugin returns the previous result as is. Reason says why.
	PassThrough bool   `json:"passThrough,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// Fresh is true when this Allocate made the leases; false when it
	// answered from leases an earlier ADD of the attachment made (a
	// repeated or concurrent ADD), and on Check. A plugin whose ADD fails
	// releases only a fresh plan's leases: the others belong to the ADD
	// that made them. A raild that predates the field never says true, so
	// a newer plugin then leaves the release to the runtime's DEL.
	Fresh bool `json:"fresh,omitempty"`
}

// Attachment is one valid (container, interface) pair of the CNI GC verb.
type Attachment struct {
	Sandbox   string `json:"sandbox"`
	CNIIfName string `json:"ifName"` // CNI_IFNAME
}

// GCRequest lists the attachments the runtime still considers valid for a network.
type GCRequest struct {
	Network string       `json:"network"`
	Valid   []Attachment `json:"valid"`
}

// GCResult says what GC released.
type GCResult struct {
	Released []Lease `json:"released"`
}

// Lease is one address held by one pod interface.
type Lease struct {
	Sandbox      string   `json:"sandbox"`
	IfName       string   `json:"podIfName"` // in the pod
	CNIIfName    string   `json:"ifName"`    // CNI_IFNAME of the call that made it, as in the requests
	Network      string   `json:"network"`
	Pool         string   `json:"pool"`
	Address      string   `json:"address"`
	NICs         []string `json:"nics"` // port names (vf mode: the VF's PF's)
	Mode         Mode     `json:"mode,omitempty"`
	VF           string   `json:"vf,omitempty"` // vf mode: the VF's PCI address
	PodNamespace string   `json:"podNamespace,omitempty"`
	PodName      string   `json:"podName,omitempty"`
	PodUID       string   `json:"podUID,omitempty"`
	Created      string   `json:"created,omitempty"`
}

// PoolStatus is one pool's size and use on this node.
type PoolStatus struct {
	Name    string   `json:"name"`
	Subnet  string   `json:"subnet"`
	Size    uint64   `json:"size"`
	Used    uint64   `json:"used"`
	Cooling uint64   `json:"cooling"`
	Free    uint64   `json:"free"`
	Rail    *int     `json:"rail,omitempty"`
	Bound   []string `json:"nics,omitempty"`
}

// Status answers the CNI STATUS verb.
type Status struct {
	Healthy bool         `json:"healthy"`
	Reason  string       `json:"reason,omitempty"`
	Pools   []PoolStatus `json:"pools"`
}

// Error is the body of every non-2xx answer. Code is a CNI error code.
type Error struct {
	Code    uint   `json:"code"`
	Msg     string `json:"msg"`
	Details string `json:"details,omitempty"`

	// unreachable marks the client's own failure to reach raild, as
	// opposed to a code 11 that raild answered (e.g. the kubelet is down).
	unreachable bool
}

func (e *Error) Error() string {
	if e.Details == "" {
		return e.Msg
	}
	return e.Msg + ": " + e.Details
}

// CNI error codes used on the wire (spec section "Error").
const (
	CodeIncompatibleVersion = 1
	CodeUnsupportedField    = 2
	CodeUnknownContainer    = 3
	CodeInvalidEnv          = 4
	CodeIO                  = 5
	CodeDecode              = 6
	CodeInvalidConfig       = 7
	CodeTryAgainLater       = 11
	CodeNotAvailable        = 50
	CodeInternal            = 999
	// CodeNoNIC: the pod asked for RDMA and no NIC is usable (plugin-specific range >= 100).
	CodeNoNIC = 100
	// CodePoolExhausted: the pool has no free address.
	CodePoolExhausted = 101
)

// IsUnreachable reports whether err is the client's failure to reach raild
// or to read its whole answer (always code 11).
func IsUnreachable(err error) bool {
	var apiErr *Error
	return errors.As(err, &apiErr) && apiErr.unreachable
}

// IsCode reports whether err is a raild error with this CNI code.
func IsCode(err error, code uint) bool {
	var apiErr *Error
	return errors.As(err, &apiErr) && apiErr.Code == code
}
