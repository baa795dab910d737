package topology_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestReadNICPortsMatchesDiscoverDevice: reading a known NIC's ports
// alone gives the NIC and the port problems that reading its whole device
// gives, on every built-in machine and after what a netdev's move does to
// a live node (moved away: the netdev and its GIDs gone from the host;
// back before its GID table filled in; a port down); its GID table is
// said not filled only where a RoCE port's netdev is on the host without
// GID 0. A device gone is not read so (ok false: read it whole). And a
// netdev marked away (NIC.Away, nothing read) is what DiscoverDevice
// reads once the netdev and its GIDs left the host.
func TestReadNICPortsMatchesDiscoverDevice(t *testing.T) {
	gidsGone := func(t *testing.T, root string, nic topology.NIC) {
		for _, p := range nic.Ports {
			err := os.Remove(filepath.Join(root, "sys/class/infiniband", nic.Device, "ports", strconv.Itoa(p.Num), "gid_attrs/ndevs/0"))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name      string
		damage    func(t *testing.T, root string, nic topology.NIC)
		gidsReady func(nic topology.NIC) bool // of the NIC read
		gone      bool                        // the device is gone: ok false
		away      bool                        // NIC.Away must match too
	}{
		{name: "as written", gidsReady: func(topology.NIC) bool { return true }},
		{name: "port down", damage: func(t *testing.T, root string, nic topology.NIC) {
			mustDo(t, fakesys.SetPortState(root, nic.Device, nic.Port, "DOWN"))
		}, gidsReady: func(topology.NIC) bool { return true }},
		{name: "GID table not filled yet", damage: gidsGone, gidsReady: func(n topology.NIC) bool {
			return n.LinkLayer != topology.Ethernet || n.Netdev == ""
		}},
		{name: "netdev moved away", damage: func(t *testing.T, root string, nic topology.NIC) {
			gidsGone(t, root, nic)
			if nic.Netdev != "" && !nic.Virtual {
				mustDo(t, fakesys.RemoveNetdev(root, nic.Netdev))
			}
		}, gidsReady: func(topology.NIC) bool { return true }, away: true},
		{name: "device gone", damage: func(t *testing.T, root string, nic topology.NIC) {
			mustDo(t, os.RemoveAll(filepath.Join(root, "sys/class/infiniband", nic.Device)))
		}, gone: true},
	}
	for _, machine := range fakesys.Names() {
		for _, tc := range cases {
			t.Run(machine+"/"+tc.name, func(t *testing.T) {
				root, _ := writeMachine(t, machine, fakesys.Options{})
				before := discover(t, root)
				sys, err := topology.OpenSysfs(root)
				if err != nil {
					t.Fatal(err)
				}
				for _, nic := range before.NICs {
					if tc.away && (nic.Virtual || nic.Bond || nic.Netdev == "" || nic.DevicePorts > 1) {
						continue // a software device's netdev is its parent, a bond's shows a slave once gone; a dual port's sibling is another NIC
					}
					if tc.damage != nil {
						tc.damage(t, root, nic)
					}
				}
				for _, nic := range before.NICs {
					if tc.away && (nic.Virtual || nic.Bond || nic.Netdev == "" || nic.DevicePorts > 1) {
						continue
					}
					got, gotProblems, ready, ok := sys.ReadNICPorts(nic)
					if tc.gone {
						if ok {
							t.Errorf("%s: ReadNICPorts of a device gone said ok", nic.Name)
						}
						continue
					}
					if !ok {
						t.Fatalf("%s: ReadNICPorts not ok", nic.Name)
					}
					nics, problems := sys.DiscoverDevice(nic.Device)
					after := before.WithDevice(nic.Device, nics, problems)
					want, found := after.NICByName(nic.Name)
					if !found {
						t.Fatalf("%s: not read whole", nic.Name)
					}
					wantProblems := after.NICPortProblems(want)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s: ReadNICPorts\n got  %+v\n want %+v", nic.Name, got, want)
					}
					if !reflect.DeepEqual(gotProblems, wantProblems) {
						t.Errorf("%s: ReadNICPorts problems %v, want %v", nic.Name, gotProblems, wantProblems)
					}
					if ready != tc.gidsReady(want) {
						t.Errorf("%s (%s, netdev %q): GIDs ready %v, want %v", nic.Name, want.LinkLayer, want.Netdev, ready, !ready)
					}
					if !tc.away {
						continue
					}
					marked, markedProblems := nic.Away(nic.Netdev)
					if !reflect.DeepEqual(marked, want) {
						t.Errorf("%s: Away\n got  %+v\n want %+v", nic.Name, marked, want)
					}
					if !reflect.DeepEqual(markedProblems, wantProblems) {
						t.Errorf("%s: Away problems %v, want %v", nic.Name, markedProblems, wantProblems)
					}
					m := after.WithNICPorts(marked, markedProblems)
					if ok, _ := m.Usable(marked, topology.Request{}); ok {
						t.Errorf("%s marked away: placement may give it", nic.Name)
					}
				}
			})
		}
	}
}
