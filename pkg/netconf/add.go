package netconf

import (
	"net"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
)

// Add is what a rail ADD reads before it asks raild, in one step: the
// netconf, the previous result when chained, the pod's keys and its ask,
// and the request raild answers.
type Add struct {
	Conf    *Rail
	Prev    *current.Result // nil: not chained (a Multus delegate)
	Keys    PodKeys
	Ask     api.Ask
	Request api.AllocateRequest
}

// LoadAdd reads an ADD's netconf, CNI_ARGS and the pod's ask (its
// annotations and cni-args), each refused with its CNI error.
func LoadAdd(args *skel.CmdArgs) (*Add, error) {
	conf, prev, err := Load(args.StdinData)
	if err != nil {
		return nil, err
	}
	keys, err := ParsePodKeys(args.Args)
	if err != nil {
		return nil, err
	}
	ask, err := api.PodAsk(conf.Annotations(), conf.CNIArgs())
	if err != nil {
		return nil, types.NewError(types.ErrInvalidNetworkConfig, "invalid pod annotation", err.Error())
	}
	return &Add{Conf: conf, Prev: prev, Keys: keys, Ask: ask, Request: AllocateRequest(args, conf, prev, keys)}, nil
}

// AllocateRequest is what raild needs to know about an ADD.
func AllocateRequest(args *skel.CmdArgs, conf *Rail, prev *current.Result, keys PodKeys) api.AllocateRequest {
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

// macString is mac as raild reads it ("" for none).
func macString(mac net.HardwareAddr) string {
	if mac == nil {
		return ""
	}
	return mac.String()
}
