package harness

import (
	"fmt"
	"net"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/netnstest"
)

// TestRefund: a stand-in moved into a pod (renamed, labelled) comes back
// to the node netns when the pod netns is deleted, as the kernel returns a
// physical NIC: down, under its pod name, alias and MTU kept; if that
// name is taken, as dev<N>.
func TestRefund(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces and veth links")
	tests := []struct {
		name      string
		takenName bool
	}{
		{"pod name free in the node", false},
		{"pod name taken in the node", true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := randomHex(3)
			if err != nil {
				t.Fatal(err)
			}
			f, node, pod := newTestFabric(t, id)
			s, err := f.Add("mlx5_0", fmt.Sprintf("rt%sn%d", id, i), "Ethernet", 9000, true)
			if err != nil {
				t.Fatal(err)
			}
			if tc.takenName {
				if _, err := f.Add("mlx5_1", "rail0", "Ethernet", 1500, true); err != nil {
					t.Fatal(err)
				}
			}
			moveInto(t, node, pod, s.Name, "rail0", "rail:test", 4000)
			if err := f.DeleteNetns(pod); err != nil {
				t.Fatal(err)
			}
			h, err := node.Netlink()
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			links, err := h.LinkList()
			if err != nil {
				t.Fatal(err)
			}
			var back netlink.Link
			for _, l := range links {
				if l.Attrs().HardwareAddr.String() == s.MAC.String() {
					back = l
				}
			}
			if back == nil {
				t.Fatalf("stand-in %s was not refunded to the node netns", s.Name)
			}
			a := back.Attrs()
			wantName := "rail0"
			if tc.takenName {
				wantName = a.Name // dev<N>
				if a.Name[:3] != "dev" {
					t.Errorf("refunded as %q, want dev<N> (rail0 is taken)", a.Name)
				}
			}
			if a.Name != wantName || a.Alias != "rail:test" || a.MTU != 4000 || a.Flags&net.FlagUp != 0 {
				t.Errorf("refunded %s alias=%q mtu=%d flags=%v, want %s, alias kept, MTU 4000, down", a.Name, a.Alias, a.MTU, a.Flags, wantName)
			}
		})
	}
}

func newTestFabric(t *testing.T, id string) (*Fabric, *NetNS, *NetNS) {
	t.Helper()
	var made []*NetNS
	t.Cleanup(func() {
		for _, n := range made {
			if err := n.Delete(); err != nil {
				t.Error(err)
			}
		}
	})
	for _, suffix := range []string{"node", "fabric", "pod"} {
		n, err := CreateNetNS(fmt.Sprintf("rail-test-%s-%s", id, suffix))
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, n)
	}
	f, err := NewFabric(made[0], made[1])
	if err != nil {
		t.Fatal(err)
	}
	return f, made[0], made[2]
}

// moveInto moves a node link into pod, renamed, with an alias and MTU.
func moveInto(t *testing.T, node, pod *NetNS, name, podName, alias string, mtu int) {
	t.Helper()
	h, err := node.Netlink()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	link, err := h.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	podNS, err := pod.Handle()
	if err != nil {
		t.Fatal(err)
	}
	defer podNS.Close()
	if err := h.LinkSetNsFd(link, int(podNS)); err != nil {
		t.Fatal(err)
	}
	p, err := pod.Netlink()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	moved, err := p.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{p.LinkSetName(moved, podName), p.LinkSetAlias(moved, alias), p.LinkSetMTU(moved, mtu), p.LinkSetUp(moved)} {
		if step != nil {
			t.Fatal(step)
		}
	}
}
