package netconf

import "github.com/containernetworking/cni/pkg/version"

// RailVersions are the CNI spec versions the rail plugin accepts. A conflist
// with another cniVersion makes every ADD fail in skel's version check, so
// raild's installer refuses to chain rail into one.
func RailVersions() version.PluginInfo {
	return version.VersionsStartingFrom("0.4.0")
}
