package service

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/pkg/api"
)

// explicitPool is the pool the attachment names, in order of precedence:
// Multus cni-args, the rail.dev/pool annotation, the network's default.
// An empty answer means "the pool bound to each NIC".
func (s *Service) explicitPool(req api.AllocateRequest) (string, error) {
	name, field := req.Pool, "pool"
	if v := req.Annotations[api.AnnotationPool]; v != "" {
		name, field = v, "annotation "+api.AnnotationPool
	}
	if req.CNIArgs != nil && req.CNIArgs.Pool != "" {
		name, field = req.CNIArgs.Pool, "cni-args pool"
	}
	if name == "" {
		return "", nil
	}
	if _, ok := s.alloc.Pools().Get(name); !ok {
		return "", &api.Error{Code: api.CodeInvalidConfig, Msg: fmt.Sprintf("invalid %s", field),
			Details: fmt.Sprintf("pool %q does not exist on this node; pools: %s", name, strings.Join(s.poolNames(), ", "))}
	}
	return name, nil
}

// onlyPool is the default when nothing names a pool and only one exists.
func (s *Service) onlyPool() (string, error) {
	names := s.poolNames()
	if len(names) == 1 {
		return names[0], nil
	}
	return "", &api.Error{Code: api.CodeInvalidConfig, Msg: "no pool chosen",
		Details: fmt.Sprintf("set \"pool\" in the netconf, the %s annotation or cni-args pool; pools: %s",
			api.AnnotationPool, strings.Join(names, ", "))}
}

// boundPool is the pool bound to a NIC by name, PCI address or rail; the
// only pool when no pool is bound to anything.
func (s *Service) boundPool(node *placement.Node, nic string) (string, error) {
	rail, hasRail := node.RailOf(nic)
	for _, name := range s.poolNames() {
		pool, _ := s.alloc.Pools().Get(name)
		cfg := pool.Config
		if cfg.Rail != nil && hasRail && *cfg.Rail == rail {
			return name, nil
		}
		for _, id := range cfg.NICs {
			if resolved, err := node.ResolveNames([]string{id}); err == nil && slices.Contains(resolved, nic) {
				return name, nil
			}
		}
	}
	if len(s.poolNames()) == 1 {
		return s.poolNames()[0], nil
	}
	railText := ""
	if hasRail {
		railText = fmt.Sprintf(" (rail %d)", rail)
	}
	return "", &api.Error{Code: api.CodeInvalidConfig, Msg: "no pool for NIC " + nic,
		Details: fmt.Sprintf("no pool is bound to %s%s: set \"pool\" in the netconf or the %s annotation, or bind a pool with rail:/nics: in raild's config",
			nic, railText, api.AnnotationPool)}
}

// poolNICs are the NICs a pool is bound to (nil: any).
func (s *Service) poolNICs(node *placement.Node, name string) ([]string, error) {
	pool, _ := s.alloc.Pools().Get(name)
	cfg := pool.Config
	var out []string
	if len(cfg.NICs) > 0 {
		names, err := node.ResolveNames(cfg.NICs)
		if err != nil {
			return nil, &api.Error{Code: api.CodeInvalidConfig, Msg: fmt.Sprintf("pool %q is bound to NICs this node lacks", name), Details: err.Error()}
		}
		out = append(out, names...)
	}
	if cfg.Rail != nil {
		for nic, r := range s.opt.Rails {
			if r == *cfg.Rail {
				out = append(out, nic)
			}
		}
		if len(out) == 0 {
			return nil, &api.Error{Code: api.CodeNoNIC, Msg: fmt.Sprintf("pool %q is bound to rail %d", name, *cfg.Rail),
				Details: "no NIC on this node carries that rail"}
		}
	}
	sort.Strings(out)
	return out, nil
}

// poolNames are the pools, sorted; it never takes the allocator's lock
// (placement calls it while holding it).
func (s *Service) poolNames() []string {
	names := s.alloc.Pools().Names()
	sort.Strings(names)
	return names
}
