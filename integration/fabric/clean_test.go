package fabric

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// nodeState is guest/state.sh's view of a node: links, addresses, routes,
// rules, RDMA devices, /dev/infiniband, GID tables and named netns.
type nodeState []string

func (n *node) state(t *testing.T) nodeState {
	t.Helper()
	out := n.run(t, "read the node's state", time.Minute, "bash "+n.script("state.sh"))
	return strings.Split(strings.TrimSpace(out), "\n")
}

// checkAsBefore requires both nodes to hold no lease, no pod rxe, and the
// state they had before any pod.
func checkAsBefore(t *testing.T, before map[*node]nodeState) {
	t.Helper()
	for n, want := range before {
		if leases := n.leases(t); len(leases) > 0 {
			t.Errorf("node %s: leases left: %+v", n.name, leases)
		}
		got := n.state(t)
		for _, l := range got {
			if strings.HasPrefix(l, "rdma "+topology.PodSoftRoCEPrefix) {
				t.Errorf("node %s: a pod's rxe is left: %s", n.name, l)
			}
		}
		var gone, added []string
		for _, l := range want {
			if !slices.Contains(got, l) {
				gone = append(gone, l)
			}
		}
		for _, l := range got {
			if !slices.Contains(want, l) {
				added = append(added, l)
			}
		}
		if len(gone)+len(added) > 0 {
			t.Errorf("node %s is not as before the pods:\nmissing:\n  %s\nnew:\n  %s", n.name, strings.Join(gone, "\n  "), strings.Join(added, "\n  "))
		}
	}
}

// railOf says which rail's NIC a lease holds: raild names a softRoCE
// node's NIC by its netdev (a PCI address would do too).
func (n *node) railOf(l api.Lease) (int, bool) {
	if len(l.NICs) != 1 {
		return 0, false
	}
	for _, c := range n.nics {
		if l.NICs[0] == c.name || l.NICs[0] == c.pci {
			return c.rail, true
		}
	}
	return 0, false
}
