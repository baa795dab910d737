package doctor

import (
	"fmt"
	"sort"

	"github.com/vishvananda/netns"

	"github.com/railcni/rail/daemon/nodenics"
	"github.com/railcni/rail/pkg/topology"
)

// nodeNICs is the protection of the node's own NICs: raild's when it
// answered, else read here (addresses and routes too when root is this
// host), and a check when that read failed.
func nodeNICs(live *topology.Report, m *topology.Machine, root string) (map[string]topology.Protection, []check) {
	switch {
	case live != nil:
		return live.Protected, nil
	case m == nil:
		return nil, nil
	case root != "/":
		return m.LinkProtection(), nil
	}
	p, err := nodenics.Reader{NS: netns.None()}.All(m)
	if err != nil {
		return m.LinkProtection(), []check{{"warn", "the node's own NICs: " + err.Error(), "protection from sysfs alone (bonds, uppers)"}}
	}
	return p, nil
}

// protectedChecks says which NICs are the node's own, why, and what rail
// does with each.
func protectedChecks(protected map[string]topology.Protection) []check {
	names := make([]string, 0, len(protected))
	for name := range protected {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]check, 0, len(names))
	for _, name := range names {
		p := protected[name]
		out = append(out, check{level: "ok", what: fmt.Sprintf("%s is the node's own (protected, %s): %s", name, p.Use(), p.Why())})
	}
	return out
}
