package inventory

import (
	"testing"

	"github.com/railcni/rail/daemon/linkfilter"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestNetdevNICUpdate: on a softRoCE node (netdev-only NICs counted) a
// link event of a NIC's netdev reads that NIC again by its netdev: its
// state follows the netdev's, and a netdev that goes leaves the machine.
// Before, the read looked for an RDMA device of that name, found none and
// dropped the NIC.
func TestNetdevNICUpdate(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "softroce-vm", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	discover := func(root string) (*topology.Machine, error) {
		return topology.DiscoverWith(root, topology.Options{NetdevNICs: true})
	}
	inv, err := New(root, discover, nil)
	if err != nil {
		t.Fatal(err)
	}
	filter := newEventFilter(inv.sys)
	steps := []struct {
		name   string
		change func() error
		event  LinkEvent
		state  map[string]string // NIC -> state; "" absent
	}{
		{name: "eth1 down", change: func() error { return fakesys.SetNetdevState(root, "eth1", false) },
			event: LinkEvent{Index: 3, Name: "eth1", State: linkfilter.State{OperState: 2}}, // IF_OPER_DOWN
			state: map[string]string{"eth1": "DOWN", "eth2": "ACTIVE"}},
		{name: "eth1 up", change: func() error { return fakesys.SetNetdevState(root, "eth1", true) },
			event: LinkEvent{Index: 3, Name: "eth1", State: linkfilter.State{OperState: 6}}, // IF_OPER_UP
			state: map[string]string{"eth1": "ACTIVE", "eth2": "ACTIVE"}},
		{name: "eth2 gone", change: func() error { return fakesys.RemoveNetdev(root, "eth2") },
			event: LinkEvent{Index: 4, Name: "eth2", Gone: true}, state: map[string]string{"eth1": "ACTIVE", "eth2": ""}},
	}
	for _, st := range steps {
		if err := st.change(); err != nil {
			t.Fatal(err)
		}
		c := filter.classify(inv.Current(), st.event)
		inv.read(st.name, concern{devices: inv.devicesOf(c), moves: c.moves}, Watch{})
		for name, want := range st.state {
			nic, ok := inv.Machine().NICByName(name)
			switch {
			case want == "" && ok:
				t.Errorf("%s: %s still listed", st.name, name)
			case want != "" && (!ok || nic.State != want):
				t.Errorf("%s: %s %+v (listed %v), want state %s", st.name, name, nic, ok, want)
			}
		}
	}
}
