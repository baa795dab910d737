package inventory

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestNICMoveReadsOnlyItsPorts: a NIC's netdev (a veth standing in for
// mlx5_0's) moved into another plugin's pod and back, as host-device
// does, costs no read of its RDMA device: its departure marks it away
// from the event alone (placement refuses it while it sits in the pod),
// its return reads that NIC's ports (it is placeable again), and the
// follow-up reads them once more only when its GID table was not filled
// in yet. Before, every event of the move read the whole device, and the
// follow-up read it again.
func TestNICMoveReadsOnlyItsPorts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gidsReady bool // the port's GID 0 is there when the netdev returns
	}{
		{name: "back with its GIDs", gidsReady: true},
		{name: "back before its GIDs", gidsReady: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tag := "mv"
			if !tc.gidsReady {
				tag = "mg"
			}
			r := newStandInRig(t, tag)
			r.root = t.TempDir() // a RoCE NIC: its GID table names its netdev
			_, err := fakesys.Write(r.root, "lab-1x1", fakesys.Options{Netdevs: map[string]string{"mlx5_0": r.nic.Name}})
			must(t, err)
			// raild's Settle: the kernel's down of the netdev and its
			// departure, some milliseconds apart, are one burst
			inv, err := New(r.root, nil, nil)
			must(t, err)
			inv.linksDescribed = kernelNamesParents() // as on a node: the move keeps the filter's program
			runWatch(t, inv, r.ns, Watch{Settle: 100 * time.Millisecond, FollowUp: 20 * time.Millisecond})
			must(t, r.h.LinkAdd(r.nic))
			must(t, r.h.LinkSetUp(r.nic))
			waitEvents(t, inv, 1)
			before := waitQuiet(t, inv)

			link, err := r.h.LinkByName(r.nic.Name)
			must(t, err)
			must(t, r.h.LinkSetNsFd(link, int(r.podNS)))
			away := waitNIC(t, inv, "its netdev marked away", func(s *Snapshot, nic topology.NIC) bool {
				return nic.Netdev == "" && s.Away[r.nic.Name] == "mlx5_0"
			})
			if ok, _ := away.Machine.Usable(nicOf(t, away, "mlx5_0"), topology.Request{}); ok {
				t.Error("mlx5_0 sits in a pod, and placement may give it")
			}
			// The kernel sets the netdev down before it moves it: a burst
			// of its own only when the machine is too loaded for raild's
			// settle to hold both, and then one read of the NIC's ports.
			if st := waitQuiet(t, inv); st.DeviceReads != before.DeviceReads || st.PortReads-before.PortReads > 1 || st.FullRescans != before.FullRescans {
				t.Errorf("the move out read %d devices, %d NICs' ports, %d whole nodes; want none (at most the NIC's ports)",
					st.DeviceReads-before.DeviceReads, st.PortReads-before.PortReads, st.FullRescans-before.FullRescans)
			}

			gid0 := filepath.Join(r.root, "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0")
			if !tc.gidsReady {
				aside := filepath.Join(t.TempDir(), "gid0")
				must(t, os.Rename(gid0, aside))
				t.Cleanup(func() { _ = os.Rename(aside, gid0) })
			}
			mid := waitQuiet(t, inv)
			inPod, err := r.podH.LinkByName(r.nic.Name)
			must(t, err)
			must(t, r.podH.LinkSetUp(inPod))
			must(t, r.podH.LinkSetNsFd(inPod, int(r.ns)))
			back, err := r.h.LinkByName(r.nic.Name)
			must(t, err)
			must(t, r.h.LinkSetUp(back))
			snap := waitNIC(t, inv, "its netdev back", func(s *Snapshot, nic topology.NIC) bool {
				return nic.Netdev == r.nic.Name && len(s.Away) == 0
			})
			if ok, why := snap.Machine.Usable(nicOf(t, snap, "mlx5_0"), topology.Request{}); !ok {
				t.Errorf("mlx5_0 back on the host is not placeable: %s", why)
			}
			after := waitQuiet(t, inv)
			if after.DeviceReads != mid.DeviceReads || after.FullRescans != mid.FullRescans {
				t.Errorf("the move back read %d devices, %d whole nodes; want only the NIC's ports", after.DeviceReads-mid.DeviceReads, after.FullRescans-mid.FullRescans)
			}
			if after.PortReads == mid.PortReads {
				t.Error("the move back read no port of the NIC")
			}
			wantFollowUps := uint64(0)
			if !tc.gidsReady {
				wantFollowUps = 1
			}
			if got := after.FollowUps - mid.FollowUps; got != wantFollowUps {
				t.Errorf("%d follow-ups after the move back, want %d (GIDs ready: %v)", got, wantFollowUps, tc.gidsReady)
			}
		})
	}
}

// waitNIC waits for a snapshot whose mlx5_0 satisfies ok.
func waitNIC(t *testing.T, inv *Inventory, what string, ok func(*Snapshot, topology.NIC) bool) *Snapshot {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for {
		s := inv.Current()
		if nic, found := s.Machine.NICByName("mlx5_0"); found && ok(s, nic) {
			return s
		}
		if time.Now().After(deadline) {
			nic, _ := s.Machine.NICByName("mlx5_0")
			t.Fatalf("no snapshot with mlx5_0 %s: %+v, away %v", what, nic, s.Away)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
