package service

import (
	"fmt"
	"sort"
	"strings"

	"github.com/railcni/rail/pkg/api"
)

// explicitPool is the pool the attachment names, in order of precedence:
// Multus cni-args, the rail.dev/pool annotation, the network's default.
// An empty answer means "the pool bound to each NIC".
func (s *Service) explicitPool(req api.AllocateRequest, pv *view) (string, error) {
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
	if _, ok := pv.get(name); !ok {
		return "", &api.Error{Code: api.CodeInvalidConfig, Msg: fmt.Sprintf("invalid %s", field),
			Details: fmt.Sprintf("pool %q does not exist on this node; pools: %s", name, strings.Join(pv.names(), ", "))}
	}
	return name, nil
}

// onlyPool is the default when nothing names a pool and only one exists.
func onlyPool(pv *view) (string, error) {
	names := pv.names()
	if len(names) == 1 {
		return names[0], nil
	}
	return "", &api.Error{Code: api.CodeInvalidConfig, Msg: "no pool chosen",
		Details: fmt.Sprintf("set \"pool\" in the netconf, the %s annotation or cni-args pool; pools: %s",
			api.AnnotationPool, strings.Join(names, ", "))}
}

// poolNICs are the NICs a pool is bound to (nil: any).
func (s *Service) poolNICs(pv *view, name string) ([]string, error) {
	pool, _ := pv.get(name)
	cfg := pool.Config
	var out []string
	if len(cfg.NICs) > 0 {
		names, err := pv.node.ResolveNames(cfg.NICs)
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
