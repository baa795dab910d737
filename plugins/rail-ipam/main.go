// Command rail-ipam is a CNI IPAM plugin that leases addresses from raild's
// pools, for main plugins from elsewhere (macvlan, sriov, ipoib, host-device).
package main

import (
	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/railcni/rail/pkg/verbs"
)

func main() {
	verbs.GuardNetns()
	p := newPlugin()
	skel.PluginMainFuncs(skel.CNIFuncs{
		Add: p.add, Del: p.del, Check: p.check, Status: p.status, GC: p.gc,
	}, version.All, "rail-ipam: addresses from raild's pools")
}
