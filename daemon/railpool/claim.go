package railpool

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/railcni/rail/ipam"
)

// Claim is this node's block of one RailPool.
type Claim struct {
	Pool   string       `json:"pool"`
	Block  string       `json:"block"` // the RailPoolBlock's name
	Index  int64        `json:"index"`
	Subnet netip.Prefix `json:"subnet"`
	Kept   bool         `json:"kept"` // found from an earlier start, not claimed now
	// Attempts counts the creates this claim took (0 when kept): each
	// AlreadyExists is another node that won the block first.
	Attempts int `json:"attempts"`
}

// Result is what a node got from the RailPools that select it.
type Result struct {
	Claims []Claim
	// Pools are the config pools equivalent to the claims, in claim order,
	// each sliced to this node's block: hand them to ipam.NewPools.
	Pools []ipam.PoolConfig
}

// UnavailableError says the API server could not tell which RailPools
// select the node: it did not answer, refused, or has no Node of this name
// (yet). No pool was looked at; asking again later may succeed.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// Claimer claims blocks for one node.
type Claimer struct {
	Kube kubernetes.Interface
	Dyn  dynamic.Interface // RailPools and blocks
	// Watch follows RailPools (Follow); nil: Dyn.
	Watch dynamic.Interface
	Node  string
}

// NodePools lists the RailPools that select this node, keeps the blocks
// the node already holds and claims one for each other pool. configPools
// are the pools of raild's config: a RailPool with the name of one of
// them is an error. A RailPool in error does not stop the others: the
// result holds every pool claimed, the error every pool refused.
func (c Claimer) NodePools(ctx context.Context, configPools []ipam.PoolConfig) (Result, error) {
	return c.Claim(ctx, configPools, nil)
}

// Claim is NodePools for the RailPools not named in held (pools the node
// already has in use); it is called again when RailPools are added.
func (c Claimer) Claim(ctx context.Context, configPools []ipam.PoolConfig, held map[string]bool) (Result, error) {
	if c.Node == "" {
		return Result{}, errors.New("railpools: this node's name is empty: set nodeName in the config, --node-name or $NODE_NAME (from spec.nodeName in the DaemonSet)")
	}
	node, err := c.Kube.CoreV1().Nodes().Get(ctx, c.Node, metav1.GetOptions{})
	if err != nil {
		return Result{}, &UnavailableError{fmt.Errorf("railpools: get node %q (its labels pick the pools, its uid owns the blocks): %w", c.Node, err)}
	}
	pools, err := store{c.Dyn}.listPools(ctx)
	if err != nil {
		return Result{}, &UnavailableError{fmt.Errorf("railpools: %w", err)}
	}
	pools = slices.DeleteFunc(pools, func(p RailPool) bool { return held[p.Name] })
	picked, layouts, err := c.pick(pools, node.Labels, configPools)
	var res Result
	errs := []error{err}
	for i := range picked {
		claim, err := c.claim(ctx, &picked[i], layouts[i], node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pc := poolConfig(&picked[i], c.Node, claim.Subnet)
		if err := ipam.CheckPool(pc, where(&picked[i])+": spec", c.Node); err != nil {
			errs = append(errs, fmt.Errorf("block %s: %w", claim.Block, err))
			continue
		}
		res.Claims = append(res.Claims, claim)
		res.Pools = append(res.Pools, pc)
	}
	return res, errors.Join(errs...)
}

// pick returns the pools whose selector matches the node, checked, with
// their layouts, sorted by name.
func (c Claimer) pick(pools []RailPool, nodeLabels map[string]string, configPools []ipam.PoolConfig) ([]RailPool, []layout, error) {
	slices.SortFunc(pools, func(a, b RailPool) int { return strings.Compare(a.Name, b.Name) })
	inConfig := make(map[string]int, len(configPools))
	for i, p := range configPools {
		inConfig[p.Name] = i
	}
	var picked []RailPool
	var layouts []layout
	var errs []error
	for i := range pools {
		p := &pools[i]
		sel, err := selector(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !sel.Matches(labels.Set(nodeLabels)) {
			continue
		}
		if j, clash := inConfig[p.Name]; clash {
			errs = append(errs, fmt.Errorf("%s: raild's config has a pool of the same name (pools[%d]): pool names are one namespace, rename the RailPool or remove the config pool", where(p), j))
			continue
		}
		l, err := check(p, c.Node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		picked, layouts = append(picked, *p), append(layouts, l)
	}
	return picked, layouts, errors.Join(errs...)
}

// owner makes the Node the block's owner, for the garbage collector.
func owner(node *corev1.Node) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
}

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
