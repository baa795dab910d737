package service

import (
	"fmt"

	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/pkg/api"
)

// maxIfName is the kernel's limit on interface names, in bytes.
const maxIfName = 15

// interfaceNames names the pod interface of each pick and drops the picks
// no name fits. By order (the default): chained prefix0, prefix1, ... in
// pick order; alone ifname, ifname-1, .... By rail (chained only): each
// NIC's interface is prefix<rail>, so the same GPUs give the same names on
// every node of a job.
func (s *Service) interfaceNames(node *placement.Node, req api.AllocateRequest, picks []placement.Pick) ([]placement.Pick, []string, error) {
	if req.IfNames == api.IfNamesRail {
		names, err := railNames(node, req, picks)
		return picks, names, err
	}
	names := orderNames(req, len(picks))
	return picks[:len(names)], names, nil
}

// orderNames: chained, prefix0..; alone, ifname, ifname-1, ...; at most n,
// stopping where a name would not fit.
func orderNames(req api.AllocateRequest, n int) []string {
	names := make([]string, 0, n)
	for i := 0; i < n; i++ {
		var name string
		switch {
		case req.Chained:
			name = fmt.Sprintf("%s%d", prefixOr(req.IfPrefix), i)
		case i == 0:
			name = req.CNIIfName
		default:
			name = fmt.Sprintf("%s-%d", req.CNIIfName, i)
		}
		if len(name) > maxIfName {
			break
		}
		names = append(names, name)
	}
	return names
}

func railNames(node *placement.Node, req api.AllocateRequest, picks []placement.Pick) ([]string, error) {
	if !req.Chained {
		return nil, invalid("ifNames", "%q names chained interfaces only; alone, rail's interface is CNI_IFNAME (%s): drop ifNames or chain rail after the primary plugin",
			api.IfNamesRail, req.CNIIfName)
	}
	names := make([]string, len(picks))
	nicOf := map[string]string{}
	for i, p := range picks {
		rail, ok := node.RailOf(p.NIC.Name)
		if !ok {
			return nil, invalid("ifNames", "%q: NIC %s carries no rail on this node (rails: %s); number it in raild's rails.nics, or use ifNames %q",
				api.IfNamesRail, p.NIC.Name, node.DescribeRails(), api.IfNamesOrder)
		}
		names[i] = fmt.Sprintf("%s%d", prefixOr(req.IfPrefix), rail)
		if other, taken := nicOf[names[i]]; taken {
			return nil, invalid("ifNames", "%q: NICs %s and %s both carry rail %d, so both would be %s; give them different rails in raild's rails.nics, or use ifNames %q",
				api.IfNamesRail, other, p.NIC.Name, rail, names[i], api.IfNamesOrder)
		}
		nicOf[names[i]] = p.NIC.Name
	}
	return names, nil
}

func prefixOr(p string) string {
	if p == "" {
		return "rail"
	}
	return p
}
