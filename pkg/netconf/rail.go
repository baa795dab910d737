package netconf

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// AnnotationsCapability is the runtime capability that carries pod annotations (containerd, CRI-O).
const AnnotationsCapability = "io.kubernetes.cri.pod-annotations"

// DefaultIfPrefix names chained rail interfaces rail0, rail1, ...
const DefaultIfPrefix = api.DefaultIfPrefix

// RuntimeConfig is what the runtime fills in for declared capabilities.
type RuntimeConfig struct {
	PodAnnotations map[string]string `json:"io.kubernetes.cri.pod-annotations,omitempty"`
	// Multus' capability args (multus.go), for NADs that declare them.
	DeviceID          string `json:"deviceID,omitempty"`
	CNIDeviceInfoFile string `json:"CNIDeviceInfoFile,omitempty"`
	// MAC is the "mac" capability (as sriov-cni reads it): the admin MAC
	// of the pod's VF in vf mode, over the netconf's "mac".
	MAC string `json:"mac,omitempty"`
	// InfinibandGUID is the "infinibandGUID" capability (as ib-sriov-cni
	// and Multus name it): the node and port GUID of the pod's InfiniBand
	// VF in vf mode.
	InfinibandGUID string `json:"infinibandGUID,omitempty"`
}

// Args is the "args" field; Multus puts cni-args under "cni".
type Args struct {
	CNI *api.CNIArgs `json:"cni,omitempty"`
}

// Rail is the netconf of the rail plugin.
type Rail struct {
	types.PluginConf
	Socket      string             `json:"socket,omitempty"`
	Timeout     string             `json:"timeout,omitempty"`
	Mode        api.Mode           `json:"mode,omitempty"`
	Pool        string             `json:"pool,omitempty"`
	IfPrefix    string             `json:"ifPrefix,omitempty"`
	IfNames     string             `json:"ifNames,omitempty"`
	NICs        []string           `json:"nics,omitempty"`
	Rail        *int               `json:"rail,omitempty"`
	LinkLayer   topology.LinkLayer `json:"linkLayer,omitempty"`
	MaxNICs     int                `json:"maxNICs,omitempty"`
	MaxDistance string             `json:"maxDistance,omitempty"`
	MTU         int                `json:"mtu,omitempty"`
	MacvlanMode string             `json:"macvlanMode,omitempty"`
	PKey        string             `json:"pkey,omitempty"`
	IPoIBMode   string             `json:"ipoibMode,omitempty"`
	// UnresolvedGPUs: "fail" (default: the pool's, else fail) or "ignore",
	// for GPUs the kubelet reports that raild cannot map to the node's.
	UnresolvedGPUs string `json:"unresolvedGPUs,omitempty"`
	// OnRaildDown says what a pod that did not ask for RDMA by annotation
	// or cni-args gets when raild cannot be reached: "fail" (the default:
	// the runtime retries) or "pass-through" (the previous result as is).
	OnRaildDown   string         `json:"onRaildDown,omitempty"`
	RuntimeConfig *RuntimeConfig `json:"runtimeConfig,omitempty"`
	Args          *Args          `json:"args,omitempty"`
	// LegacyAttachments is the misspelt twin of cni.dev/valid-attachments
	// that libcni sends with GC for compatibility; it is accepted and ignored.
	LegacyAttachments []types.GCAttachment `json:"cni.dev/attachments,omitempty"`
	// MultusDevice is what Multus adds for a NAD with a resourceName.
	MultusDevice
	// VFKeys are vf mode's settings of the VF, named as sriov-cni names them.
	VFKeys
	// VFPerGPU, in vf mode, gives each of the pod's GPUs a VF of its own
	// even where GPUs share a PF (nil: the pool's, else one VF per PF).
	VFPerGPU *bool `json:"vfPerGPU,omitempty"`

	// Filled by LoadRail.
	CallTimeout time.Duration   `json:"-"`
	PKeyValue   uint16          `json:"-"`
	MaxClass    *topology.Class `json:"-"`
	vfConfig    api.VFConfig
	// infinibandGUID is runtimeConfig's, parsed (vfib.go).
	infinibandGUID net.HardwareAddr
}

var (
	macvlanModes = []string{"bridge", "private", "vepa", "passthru"}
	ipoibModes   = []string{"datagram", "connected"}
	raildDown    = []string{RaildDownFail, RaildDownPassThrough}
)

// What onRaildDown accepts.
const (
	RaildDownFail        = "fail"
	RaildDownPassThrough = "pass-through"
)

// railKeys is what rail's own part of a netconf may hold, for error messages.
const railKeys = "socket, timeout, mode, pool, ifPrefix, ifNames, nics, rail, linkLayer, maxNICs, maxDistance, mtu, macvlanMode, pkey, ipoibMode, onRaildDown, unresolvedGPUs, " +
	"in mode vf " + api.VFKeyNames + ", vfPerGPU (and, written by Multus, deviceID and pciBusID)"

// LoadRail decodes and validates the rail netconf. Unknown fields, and keys
// written in another case, are refused (CNI code 2); bad values name the
// field and what is allowed (code 7).
func LoadRail(data []byte) (*Rail, error) {
	conf := &Rail{}
	if err := decodeStrict(data, conf, "rail accepts "+railKeys); err != nil {
		return nil, err
	}
	if err := conf.defaultsAndValidate(); err != nil {
		return nil, err
	}
	return conf, nil
}

func (c *Rail) defaultsAndValidate() error {
	if c.Socket == "" {
		c.Socket = api.DefaultSocket
	}
	if c.Mode == "" {
		c.Mode = api.ModeMove
	}
	if c.OnRaildDown == "" {
		c.OnRaildDown = RaildDownFail
	}
	if c.IfPrefix == "" {
		c.IfPrefix = DefaultIfPrefix
	}
	if c.IfNames == "" {
		c.IfNames = api.IfNamesOrder
	}
	if c.MacvlanMode == "" {
		c.MacvlanMode = "bridge"
	}
	if c.IPoIBMode == "" {
		c.IPoIBMode = "datagram"
	}
	if c.IPAM.Type != "" {
		return fieldError("ipam", "rail takes its addresses from raild's pools: remove \"ipam\" and name the pool with \"pool\"")
	}
	checks := []func() error{c.checkBasics, c.checkTimeout, c.checkSelector, c.checkDevice, c.checkMTU, c.checkPKey, c.checkVF, c.checkIBVF}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Rail) checkBasics() error {
	if !c.Mode.Attaches() {
		return fieldError("mode", "%q is not a mode: use one of %s", c.Mode, api.ModeList(api.AttachModes()))
	}
	if !slices.Contains(raildDown, c.OnRaildDown) {
		return fieldError("onRaildDown", "%q: use %s (the runtime retries the pod) or %s (pods that did not ask for RDMA start without it)",
			c.OnRaildDown, RaildDownFail, RaildDownPassThrough)
	}
	if err := api.CheckUnresolvedGPUs(c.UnresolvedGPUs); err != nil {
		return fieldError("unresolvedGPUs", "%s", err)
	}
	if !strings.HasPrefix(c.Socket, "/") {
		return fieldError("socket", "%q must be an absolute path to raild's unix socket (default %s)", c.Socket, api.DefaultSocket)
	}
	if c.Pool != "" && !api.ValidPoolName(c.Pool) {
		return fieldError("pool", "%q is not a pool name: letters, digits, '.', '_' and '-', at most 63", c.Pool)
	}
	if !api.ValidIfPrefix(c.IfPrefix) {
		return fieldError("ifPrefix", "%q must start with a letter and be at most 11 characters so that the interface name fits 15 bytes", c.IfPrefix)
	}
	if c.IfNames != api.IfNamesOrder && c.IfNames != api.IfNamesRail {
		return fieldError("ifNames", "%q: use %q (rail0, rail1, ... in the order the GPUs chose the NICs) or %q (each interface numbered by its NIC's rail)",
			c.IfNames, api.IfNamesOrder, api.IfNamesRail)
	}
	if !slices.Contains(macvlanModes, c.MacvlanMode) {
		return fieldError("macvlanMode", "%q: use one of %s", c.MacvlanMode, strings.Join(macvlanModes, ", "))
	}
	if !slices.Contains(ipoibModes, c.IPoIBMode) {
		return fieldError("ipoibMode", "%q: use one of %s", c.IPoIBMode, strings.Join(ipoibModes, ", "))
	}
	return nil
}

func (c *Rail) checkTimeout() error {
	c.CallTimeout = api.DefaultTimeout
	if c.Timeout == "" {
		return nil
	}
	d, err := time.ParseDuration(c.Timeout)
	if err != nil || d <= 0 || d > 5*time.Minute {
		return fieldError("timeout", "%q must be a duration between 1ms and 5m, e.g. \"10s\"", c.Timeout)
	}
	c.CallTimeout = d
	return nil
}

func (c *Rail) checkSelector() error {
	if c.LinkLayer != "" {
		ll, ok := topology.ParseLinkLayer(string(c.LinkLayer))
		if !ok {
			return fieldError("linkLayer", "%q: use InfiniBand or Ethernet (or leave it out for both)", c.LinkLayer)
		}
		c.LinkLayer = ll
	}
	if _, err := api.SelectorLinkLayer(c.Mode, c.LinkLayer); err != nil {
		return fieldError("linkLayer", "%s", err)
	}
	if c.Rail != nil && (*c.Rail < 0 || *c.Rail > 63) {
		return fieldError("rail", "%d must be a rail index from 0 to 63", *c.Rail)
	}
	if c.MaxDistance != "" {
		class, err := topology.ParseClass(c.MaxDistance)
		if err != nil {
			return fieldError("maxDistance", "%q: use PIX, PXB, PHB, P2C, NODE or SYS (the farthest GPU-to-NIC class a pod may get), or leave it out for any", c.MaxDistance)
		}
		c.MaxClass = &class
	}
	if c.MaxNICs < 0 || c.MaxNICs > 64 {
		return fieldError("maxNICs", "%d must be between 0 (one interface per chosen NIC) and 64", c.MaxNICs)
	}
	for i, nic := range c.NICs {
		if nic == "" || strings.ContainsAny(nic, "/ ") {
			return fieldError(fmt.Sprintf("nics[%d]", i), "%q must be an RDMA device name (mlx5_0) or a PCI address (0000:19:00.0)", nic)
		}
	}
	return nil
}

func (c *Rail) checkMTU() error {
	if c.MTU != 0 && (c.MTU < 576 || c.MTU > 65520) {
		return fieldError("mtu", "%d is out of range: use 576..65520 (IPoIB connected mode allows up to 65520), or 0 to keep the NIC's", c.MTU)
	}
	return nil
}

func (c *Rail) checkPKey() error {
	if c.PKey == "" {
		return nil
	}
	v, err := strconv.ParseUint(c.PKey, 0, 16)
	if err != nil || v&0x7fff == 0 || v&0x7fff == 0x7fff {
		return fieldError("pkey", "%q must be a P_Key like \"0x8001\" (1..0x7ffe, full-membership bit 0x8000 allowed)", c.PKey)
	}
	c.PKeyValue = uint16(v)
	return nil
}

// Annotations returns the pod annotations the runtime passed, if any.
func (c *Rail) Annotations() map[string]string {
	if c.RuntimeConfig == nil {
		return nil
	}
	return c.RuntimeConfig.PodAnnotations
}

// CNIArgs returns the Multus cni-args, if any.
func (c *Rail) CNIArgs() *api.CNIArgs {
	if c.Args == nil {
		return nil
	}
	return c.Args.CNI
}
