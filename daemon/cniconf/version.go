package cniconf

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/railcni/rail/pkg/netconf"
)

// ErrCNIVersion says the primary's config has a cniVersion the entry's
// plugin rejects: chained there, it would fail every pod's ADD.
var ErrCNIVersion = errors.New("the primary's cniVersion is not one rail accepts")

// railSupports checks a config's cniVersion against the versions the rail
// plugin declares (the same list its skel checks on every call).
func railSupports(cniVersion string) error {
	supported := netconf.RailVersions().SupportedVersions()
	if slices.Contains(supported, cniVersion) {
		return nil
	}
	return fmt.Errorf("%w: it says cniVersion %q and rail accepts %s, so with rail in it every pod's ADD would fail; "+
		"rail's entry is not inserted. Have the primary write cniVersion %s or later (Calico 3.31.7 and later write 1.0.0), "+
		"or use rail through Multus (cni.mode nad)", ErrCNIVersion, cniVersion, strings.Join(supported, ", "), supported[0])
}

// anyVersion is the check for an entry whose plugin rail does not know.
func anyVersion(string) error { return nil }
