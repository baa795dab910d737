package railpool

import (
	"errors"
	"fmt"
	"net/netip"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/railcni/rail/daemon/sriov"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology"
)

// maxPoolName is the longest pool name ipam takes (a RailPool's name is
// its pool's name).
const maxPoolName = 63

// poolConfig is the config pool equivalent to p on node, whose slice is
// block. The node list holds only this node: ipam hands out the block and
// nothing else of the subnet.
func poolConfig(p *RailPool, node string, block netip.Prefix) ipam.PoolConfig {
	s := p.Spec
	return ipam.PoolConfig{
		Name: p.Name, Subnet: s.Subnet, Gateway: s.Gateway, Exclude: s.Exclude, Routes: s.Routes,
		Rail: s.Rail, NICs: s.NICs, MTU: s.MTU, MaxDistance: s.MaxDistance, VFPerGPU: s.VFPerGPU, PoolVF: s.PoolVF,
		Nodes: []ipam.NodeSlice{{Node: node, Subnet: block.String()}},
	}
}

// where names a RailPool in errors, as kubectl names it.
func where(p *RailPool) string { return fmt.Sprintf("railpool %q", p.Name) }

// check validates p with ipam's rules for config pools plus its own
// fields, and returns its block layout.
func check(p *RailPool, node string) (layout, error) {
	at := where(p)
	var errs []error
	if len(p.Name) > maxPoolName {
		errs = append(errs, fmt.Errorf("%s: metadata.name is %d characters: pool names are at most %d, use a shorter name", at, len(p.Name), maxPoolName))
	}
	if p.Spec.MaxDistance != "" {
		if _, err := topology.ParseClass(p.Spec.MaxDistance); err != nil {
			errs = append(errs, fmt.Errorf("%s: spec.maxDistance %q: use PIX, PXB, PHB, P2C, NODE or SYS, or leave it out for any", at, p.Spec.MaxDistance))
		}
	}
	if _, err := sriov.PoolVF(poolConfig(p, node, netip.Prefix{})); err != nil {
		errs = append(errs, fmt.Errorf("%s: spec.%w (the pool's VF settings in vf mode)", at, err))
	}
	// The whole subnet as this node's slice: every field but the block is checked.
	whole := poolConfig(p, node, netip.Prefix{})
	whole.Nodes = nil
	if err := ipam.CheckPool(whole, at+": spec", node); err != nil {
		return layout{}, errors.Join(append(errs, err)...)
	}
	subnet := netip.MustParsePrefix(p.Spec.Subnet).Masked() // ipam.CheckPool parsed it
	l, err := newLayout(subnet, p.Spec.BlockSize, at+": spec.blockSize")
	return l, errors.Join(append(errs, err)...)
}

// selector is p's node selector; an unset one selects every node.
func selector(p *RailPool) (labels.Selector, error) {
	if p.Spec.NodeSelector == nil {
		return labels.Everything(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(p.Spec.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("%s: spec.nodeSelector: %w: fix the selector, or remove it to select every node", where(p), err)
	}
	return sel, nil
}
