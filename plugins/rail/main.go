// Command rail is the CNI plugin that puts a pod's GPU-affine RDMA NIC(s)
// into its network namespace, as raild plans.
package main

import (
	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/version"
)

func main() {
	p := newPlugin()
	skel.PluginMainFuncs(skel.CNIFuncs{
		Add:    p.add,
		Del:    p.del,
		Check:  p.check,
		Status: p.status,
		GC:     p.gc,
	}, version.All, "rail: GPU-affine RDMA NICs for pods (https://github.com/railcni/rail)")
}
