// Command rail is the CNI plugin that puts a pod's GPU-affine RDMA NIC(s)
// into its network namespace, as raild plans.
package main

import (
	"github.com/containernetworking/cni/pkg/skel"

	"github.com/railcni/rail/pkg/netconf"
)

func main() {
	skel.PluginMainFuncs(skel.CNIFuncs{
		Add:    cmdAdd,
		Del:    cmdDel,
		Check:  cmdCheck,
		Status: cmdStatus,
		GC:     cmdGC,
	}, netconf.RailVersions(), "rail: GPU-affine RDMA NICs for pods (https://github.com/railcni/rail)")
}
