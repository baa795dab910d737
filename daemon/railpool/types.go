// Package railpool gives raild its nodes' address blocks from cluster-scoped
// pools: RailPool objects (group rail.dev) name a subnet and a per-node
// block size; each raild claims one block per pool for its node by
// creating a RailPoolBlock named after the pool and the block's index.
// Create is atomic in the API server, so claimers need no leader: the one
// whose create succeeds owns the block, the others (AlreadyExists) try the
// next index. A block is owned by its Node (ownerReference), so the
// garbage collector frees it when the Node is deleted, and only then.
package railpool

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/railcni/rail/ipam"
)

// Group and Version of the RailPool API.
const (
	Group   = "rail.dev"
	Version = "v1alpha1"
	// PoolLabel on a block names its RailPool, so one pool's blocks list cheaply.
	PoolLabel = Group + "/pool"
)

// Resources served by the CRDs in manifests/helm/rail/crds.
var (
	PoolResource  = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "railpools"}
	BlockResource = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "railpoolblocks"}
)

// RailPool is a cluster-scoped pool; its name is the pool's name.
type RailPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PoolSpec `json:"spec"`
}

// PoolSpec has the fields of a config pool (ipam.PoolConfig, same names
// and meaning) except the hand-written node slices, which BlockSize and
// NodeSelector replace.
type PoolSpec struct {
	Subnet string `json:"subnet"`
	// BlockSize is the prefix length of each node's block, e.g. 26 for a
	// /26 per node out of a /16 subnet.
	BlockSize   int                `json:"blockSize"`
	Gateway     string             `json:"gateway,omitempty"`
	Exclude     []string           `json:"exclude,omitempty"`
	Routes      []ipam.RouteConfig `json:"routes,omitempty"`
	Rail        *int               `json:"rail,omitempty"`
	NICs        []string           `json:"nics,omitempty"`
	MTU         int                `json:"mtu,omitempty"`
	MaxDistance string             `json:"maxDistance,omitempty"`
	// VFPerGPU and the VF settings (vf mode's sriov-cni keys but mac)
	// mean what they mean in a config pool.
	VFPerGPU *bool `json:"vfPerGPU,omitempty"`
	ipam.PoolVF
	// NodeSelector picks the nodes that get a block; unset: every node.
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
}

// RailPoolBlock is one node's claim on one block of a RailPool. Its name
// is BlockName(pool, index), which makes two claims of one block collide.
type RailPoolBlock struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BlockSpec `json:"spec"`
}

// BlockSpec says which block of which pool a node holds.
type BlockSpec struct {
	Pool   string `json:"pool"`
	Node   string `json:"node"`
	Index  int64  `json:"index"`
	Subnet string `json:"subnet"` // the block's CIDR when it was claimed
}
