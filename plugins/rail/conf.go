package main

import (
	"fmt"

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

// allocateRequest is what raild needs to know about this ADD.
func allocateRequest(args *skel.CmdArgs, conf *netconf.Rail, keys netconf.PodKeys, chained bool) api.AllocateRequest {
	return api.AllocateRequest{
		Sandbox: args.ContainerID, Netns: args.Netns, CNIIfName: args.IfName, Network: conf.Name,
		PodNamespace: keys.Namespace, PodName: keys.Name, PodUID: keys.UID,
		Mode: conf.Mode, Pool: conf.Pool,
		Selector:    api.Selector{NICs: conf.SelectorNICs(), Rail: conf.Rail, LinkLayer: conf.LinkLayer},
		Annotations: conf.Annotations(), CNIArgs: conf.CNIArgs(),
		Chained: chained, IfPrefix: conf.IfPrefix, MaxNICs: conf.MaxNICs, MaxDistance: conf.MaxClass,
		IfNames: conf.IfNames, UnresolvedGPUs: conf.UnresolvedGPUs,
	}
}

func attachmentRequest(args *skel.CmdArgs, conf *netconf.Rail) api.AttachmentRequest {
	return api.AttachmentRequest{Sandbox: args.ContainerID, CNIIfName: args.IfName, Network: conf.Name}
}

func describeNIC(iface api.PlanInterface) string {
	if iface.NIC == nil {
		return iface.Name
	}
	return fmt.Sprintf("%s (%s, netdev %s)", iface.Name, topology.TargetName(iface.NIC.RDMADevice, iface.NIC.Port), iface.NIC.Netdev)
}
