package railpool

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ExhaustedError says every block of a pool is held by other nodes.
type ExhaustedError struct {
	Pool   string
	Node   string
	Subnet netip.Prefix
	Blocks int64 // how many blocks the pool has
	Bits   int   // the block prefix length
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("railpool %q is exhausted: all %d blocks (/%d) of %s are held by other nodes, none left for node %q "+
		"(kubectl get railpoolblocks -l %s=%s): widen spec.subnet keeping its first address (e.g. /%d to /%d), "+
		"narrow spec.nodeSelector, or delete Nodes that are gone (their blocks are freed with them)",
		e.Pool, e.Blocks, e.Bits, e.Subnet, e.Node, PoolLabel, e.Pool, e.Subnet.Bits(), max(e.Subnet.Bits()-1, 0))
}

// claim returns the node's block of p: the one it holds (a restart keeps
// its block) or the lowest free one, claimed by creating its object.
func (c Claimer) claim(ctx context.Context, p *RailPool, l layout, node *corev1.Node) (Claim, error) {
	st := store{c.Dyn}
	blocks, err := st.listBlocks(ctx, p.Name)
	if err != nil {
		return Claim{}, err
	}
	used := make(map[int64]bool, len(blocks))
	var mine []RailPoolBlock
	for _, b := range blocks {
		switch {
		case b.Spec.Node != c.Node:
			used[b.Spec.Index] = true
		case ownedBy(&b, node):
			mine = append(mine, b)
		default: // held for an earlier Node of this name: the collector frees it, do it now
			if err := st.deleteBlock(ctx, b.Name, b.UID); err != nil && !apierrors.IsNotFound(err) {
				return Claim{}, fmt.Errorf("%s: block %s of a deleted node %q: %w", where(p), b.Name, c.Node, err)
			}
		}
	}
	if len(mine) > 0 {
		return c.keep(ctx, p, l, mine)
	}
	return c.claimFree(ctx, p, l, node, used)
}

// keep returns the lowest-indexed block the node holds and frees the rest.
func (c Claimer) keep(ctx context.Context, p *RailPool, l layout, mine []RailPoolBlock) (Claim, error) {
	slices.SortFunc(mine, func(a, b RailPoolBlock) int { return cmp.Compare(a.Spec.Index, b.Spec.Index) })
	held := mine[0]
	for _, extra := range mine[1:] {
		if err := (store{c.Dyn}).deleteBlock(ctx, extra.Name, extra.UID); err != nil && !apierrors.IsNotFound(err) {
			return Claim{}, fmt.Errorf("%s: free node %q's second block %s: %w", where(p), c.Node, extra.Name, err)
		}
	}
	if held.Spec.Index < 0 || held.Spec.Index >= l.count || l.block(held.Spec.Index).String() != held.Spec.Subnet {
		return Claim{}, fmt.Errorf("%s: node %q holds block %s (%s), which spec.subnet %s with spec.blockSize %d no longer gives: "+
			"the pool's subnet or block size changed after nodes claimed blocks; restore them, or delete the pool's blocks "+
			"(kubectl delete railpoolblocks -l %s=%s) and restart raild on every node of the pool",
			where(p), c.Node, held.Name, held.Spec.Subnet, l.subnet, l.blockBits, PoolLabel, p.Name)
	}
	return Claim{Pool: p.Name, Block: held.Name, Index: held.Spec.Index, Subnet: l.block(held.Spec.Index), Kept: true}, nil
}

// claimFree creates the object of the first block nobody holds, looking
// from an index of the node's own (a hash of its name) and wrapping around;
// a create that finds the block taken (another node was first) moves to
// the next. Nodes starting together thus mostly try different blocks, and
// a node deleted and added again finds its old block first.
func (c Claimer) claimFree(ctx context.Context, p *RailPool, l layout, node *corev1.Node, used map[int64]bool) (Claim, error) {
	attempts := 0
	start := startIndex(c.Node, l.count)
	for step := int64(0); step < l.count; step++ {
		index := (start + step) % l.count
		if used[index] {
			continue
		}
		subnet := l.block(index)
		b := &RailPoolBlock{
			ObjectMeta: metav1.ObjectMeta{Name: BlockName(p.Name, index), Labels: map[string]string{PoolLabel: p.Name},
				OwnerReferences: []metav1.OwnerReference{owner(node)}},
			Spec: BlockSpec{Pool: p.Name, Node: c.Node, Index: index, Subnet: subnet.String()},
		}
		attempts++
		err := store{c.Dyn}.createBlock(ctx, b)
		if isAlreadyExists(err) {
			continue
		}
		if err != nil {
			return Claim{}, fmt.Errorf("%s: claim a block for node %q: %w", where(p), c.Node, err)
		}
		return Claim{Pool: p.Name, Block: b.Name, Index: index, Subnet: subnet, Attempts: attempts}, nil
	}
	return Claim{}, &ExhaustedError{Pool: p.Name, Node: c.Node, Subnet: l.subnet, Blocks: l.count, Bits: l.blockBits}
}

// startIndex is where node starts looking for a free block among count.
func startIndex(node string, count int64) int64 {
	h := fnv.New64a()
	h.Write([]byte(node))
	return int64(h.Sum64() % uint64(count))
}

// ownedBy reports whether b belongs to this very Node object (not to an
// earlier Node of the same name).
func ownedBy(b *RailPoolBlock, node *corev1.Node) bool {
	for _, ref := range b.OwnerReferences {
		if ref.Kind == "Node" && ref.UID == node.UID {
			return true
		}
	}
	return false
}
