package main

import (
	"fmt"
	"strings"

	"github.com/containernetworking/cni/pkg/skel"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/topology"
)

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
