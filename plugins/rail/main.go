// Command rail is the CNI plugin that puts a pod's GPU-affine RDMA NIC(s)
// into its network namespace, as raild plans.
package main

import (
	"os"

	"github.com/containernetworking/cni/pkg/skel"

	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/verbs"
)

func main() {
	verbs.GuardNetns()
	allowOwnNetnsDel()
	p := newPlugin()
	skel.PluginMainFuncs(skel.CNIFuncs{
		Add:    p.add,
		Del:    p.del,
		Check:  p.check,
		Status: p.status,
		GC:     p.gc,
	}, netconf.RailVersions(), "rail: GPU-affine RDMA NICs for pods (https://github.com/railcni/rail)")
}

// allowOwnNetnsDel lets the DEL of an ADD that rail refused (CNI_NETNS was
// the plugin's own netns) succeed: skel fails such a DEL after it ran, as
// a guard for plugins that would have worked in the wrong netns, but rail's
// DEL never works in its own netns (see podNetns), and failing it would
// make the runtime retry it forever.
func allowOwnNetnsDel() {
	if os.Getenv("CNI_COMMAND") != "DEL" {
		return
	}
	if own, err := attach.IsOwnNetns(os.Getenv("CNI_NETNS")); err == nil && own {
		_ = os.Setenv("CNI_NETNS_OVERRIDE", "1")
	}
}
