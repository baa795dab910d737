package harness

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/railcni/rail/pkg/netnstest"
)

// TestNeighbourIPNetnsAdd: in the middle of a cycle (node, fabric and pod
// namespaces, a NIC stand-in moved into the pod) another program runs
// `ip netns add` and `ip netns del`; the cycle then ends with the NIC back
// on the node and every namespace removed, no EBUSY. It runs where
// /run/netns is not a mount yet, as on a fresh machine (a cold CI run once
// failed here in integration/netns).
func TestNeighbourIPNetnsAdd(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces and veth links")
	netnstest.InFreshMountNS(t, func(t *testing.T) {
		id, err := randomHex(3)
		if err != nil {
			t.Fatal(err)
		}
		f, node, pod := newTestFabric(t, id) // its cleanup deletes each namespace and reports an error
		s, err := f.Add("mlx5_0", fmt.Sprintf("rt%sn", id), "Ethernet", 1500, true)
		if err != nil {
			t.Fatal(err)
		}
		moveInto(t, node, pod, s.Name, "rail0", "rail:test", 1500)
		neighbour := "rail-test-" + id + "-neighbour"
		for _, verb := range []string{"add", "del"} {
			if out, err := exec.Command("ip", "netns", verb, neighbour).CombinedOutput(); err != nil {
				t.Fatalf("ip netns %s %s: %v: %s", verb, neighbour, err, out)
			}
		}
		if err := f.DeleteNetns(pod); err != nil {
			t.Fatal(err)
		}
		if left, err := NetnsWithPrefix("rail-test-" + id + "-pod"); err != nil || len(left) > 0 {
			t.Errorf("pod namespace left: %v %v", left, err)
		}
	})
}
