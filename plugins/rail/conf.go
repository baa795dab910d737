package main

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/topology"
)

// loadConf reads the netconf and, when chained, the previous result.
func loadConf(stdin []byte) (*netconf.Rail, *current.Result, error) {
	conf, err := netconf.LoadRail(stdin)
	if err != nil {
		return nil, nil, err
	}
	if conf.RawPrevResult == nil {
		return conf, nil, nil
	}
	if err := version.ParsePrevResult(&conf.PluginConf); err != nil {
		return nil, nil, types.NewError(types.ErrDecodingFailure, "cannot parse prevResult", err.Error())
	}
	prev, err := current.NewResultFromResult(conf.PrevResult)
	if err != nil {
		return nil, nil, types.NewError(types.ErrDecodingFailure, "cannot convert prevResult", err.Error())
	}
	return conf, prev, nil
}

// loadDelConf is loadConf for DEL, which ignores a cached prevResult that
// does not parse: DEL needs it only to name rail's interfaces when raild
// holds no lease, and then the alias on each pod link says which are
// rail's. Failing instead would fail the DEL forever, and the runtime
// would never finish the pod's teardown.
func loadDelConf(stdin []byte) (*netconf.Rail, *current.Result, error) {
	conf, prev, err := loadConf(stdin)
	if err == nil {
		return conf, prev, nil
	}
	stripped, ok := withoutPrevResult(stdin)
	if !ok {
		return nil, nil, err
	}
	// What is wrong besides the prevResult is what DEL must report.
	conf, _, err = loadConf(stripped)
	if err != nil {
		return nil, nil, err
	}
	return conf, nil, nil
}

// withoutPrevResult is the netconf without its prevResult key; ok is
// false when it is not a JSON object or has no prevResult.
func withoutPrevResult(stdin []byte) ([]byte, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(stdin, &fields) != nil {
		return nil, false
	}
	if _, ok := fields["prevResult"]; !ok {
		return nil, false
	}
	delete(fields, "prevResult")
	out, err := json.Marshal(fields)
	return out, err == nil
}

// allocateRequest is what raild needs to know about this ADD.
func allocateRequest(args *skel.CmdArgs, conf *netconf.Rail, prev *current.Result, keys netconf.PodKeys) api.AllocateRequest {
	chained := prev != nil
	return api.AllocateRequest{
		Sandbox: args.ContainerID, Netns: args.Netns, CNIIfName: args.IfName, Network: conf.Name,
		PodNamespace: keys.Namespace, PodName: keys.Name, PodUID: keys.UID,
		Mode: conf.Mode, Pool: conf.Pool,
		Selector:    conf.Selector(),
		Annotations: conf.Annotations(), CNIArgs: conf.CNIArgs(),
		Chained: chained, IfPrefix: conf.IfPrefix, MaxNICs: conf.MaxNICs, MaxDistance: conf.MaxClass,
		IfNames: conf.IfNames, UnresolvedGPUs: conf.UnresolvedGPUs,
		PrimaryIfName: primaryIfName(args, prev), PKey: conf.PKeyValue, VFPerGPU: conf.VFPerGPU,
		MAC: macString(conf.VFConfig().MAC),
	}
}

// primaryIfName is the pod's primary interface when rail is chained: the
// sandbox interface that holds the primary's first address, else the one
// named CNI_IFNAME, else CNI_IFNAME itself (the name the runtime asked
// the primary to create). rail's own interfaces are never in prevResult
// (nameConflict refuses a plan that reuses a name found there). Empty
// alone: a Multus delegate has no primary of its own to name.
func primaryIfName(args *skel.CmdArgs, prev *current.Result) string {
	if prev == nil {
		return ""
	}
	inSandbox := func(i int) bool {
		return i >= 0 && i < len(prev.Interfaces) && prev.Interfaces[i].Sandbox != "" && prev.Interfaces[i].Name != ""
	}
	for _, ip := range prev.IPs {
		if ip.Interface != nil && inSandbox(*ip.Interface) {
			return prev.Interfaces[*ip.Interface].Name
		}
	}
	return args.IfName
}

func attachmentRequest(args *skel.CmdArgs, conf *netconf.Rail) api.AttachmentRequest {
	return api.AttachmentRequest{Sandbox: args.ContainerID, CNIIfName: args.IfName, Network: conf.Name}
}

// describePlan names every interface of a plan with its NIC.
func describePlan(plan *api.Plan) string {
	names := make([]string, len(plan.Interfaces))
	for i, iface := range plan.Interfaces {
		names[i] = describeNIC(iface)
	}
	return strings.Join(names, ", ")
}

func describeNIC(iface api.PlanInterface) string {
	if iface.NIC == nil {
		return iface.Name
	}
	return fmt.Sprintf("%s (%s, netdev %s)", iface.Name, topology.TargetName(iface.NIC.RDMADevice, iface.NIC.Port), iface.NIC.Netdev)
}

// macString is mac as raild reads it ("" for none).
func macString(mac net.HardwareAddr) string {
	if mac == nil {
		return ""
	}
	return mac.String()
}
