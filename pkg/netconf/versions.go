package netconf

import "github.com/containernetworking/cni/pkg/version"

// RailVersions are the CNI spec versions the rail plugin accepts: all that
// the CNI libraries know (0.1.0 to 1.1.0), so rail chains into the 0.3.1
// conflists of flannel, Cilium and kindnet. raild's installer refuses to
// chain rail into a conflist of any other version: skel's version check
// would fail every ADD.
func RailVersions() version.PluginInfo {
	return version.All
}
