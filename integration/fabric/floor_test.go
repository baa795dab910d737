package fabric

import (
	"fmt"
	"testing"
	"time"
)

// floorNS is a network namespace made by hand on a node, as the recipe in
// ../shared/rigs/fabric makes it and without Rail: a macvlan of the rail's
// NIC with an rxe created inside the namespace, and the variables Rail
// would inject set by hand. Traffic between two of them on the same wire is
// the floor Rail's pods are compared with.
type floorNS struct {
	n    *node
	name string
	addr string
	dev  string
}

func (f *floorNS) host() *node   { return f.n }
func (f *floorNS) label() string { return "netns " + f.n.name + "/" + f.name }
func (f *floorNS) command(script string) string {
	return fmt.Sprintf("ip netns exec %s env UCX_NET_DEVICES=%s:1 UCX_IB_GID_INDEX=1 NCCL_IB_GID_INDEX=1 UCX_UD_ETH_DGID_CHECK=n sh -c %s",
		f.name, f.dev, shellQuote(script))
}

// addFloor makes the namespace on rail's NIC with addr/24; a cleanup
// removes the rxe, the namespace and the macvlan.
func (n *node) addFloor(t *testing.T, rail int, addr string) *floorNS {
	t.Helper()
	f := &floorNS{n: n, name: "floor" + fmt.Sprint(rail), addr: addr, dev: fmt.Sprintf("rxe_fl%d", rail)}
	t.Cleanup(func() {
		_, _, _ = n.try("remove "+f.name, time.Minute, fmt.Sprintf("ip netns exec %[1]s rdma link delete %[2]s; ip netns delete %[1]s", f.name, f.dev))
	})
	n.run(t, "make "+f.name, time.Minute, fmt.Sprintf(`set -e
ip netns add %[1]s
ip link add link %[2]s name fl%[5]d type macvlan mode bridge
ip link set fl%[5]d netns %[1]s
ip -n %[1]s link set lo up
ip -n %[1]s addr add %[3]s/24 dev fl%[5]d
ip -n %[1]s link set fl%[5]d up
ip netns exec %[1]s rdma link add %[4]s type rxe netdev fl%[5]d
for i in $(seq 1 50); do ip netns exec %[1]s rdma link show %[4]s/1 | grep -q ACTIVE && exit 0; sleep 0.2; done
ip netns exec %[1]s rdma link show %[4]s/1; exit 1`, f.name, n.nics[rail].name, addr, f.dev, rail))
	return f
}
