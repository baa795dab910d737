package serve

import (
	"log/slog"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/attached"
	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// softRoCEVM writes the softroce-vm machine with more rxe in the host's
// netns (stand-ins) and returns its root.
func softRoCEVM(t *testing.T, standIns ...fakesys.SoftRoCE) string {
	t.Helper()
	host, _ := fakesys.Machine("softroce-vm")
	host.SoftRoCE = standIns
	root := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.WriteHost(root, "softroce-vm", host, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestStandInRefusal: a softRoCE node with an rxe of the host's netns on a
// NIC's netdev (the stand-in softRoCE nodes once needed) or on any other
// netdev is refused, naming each device, its netdev and the command that
// deletes it; a node without one starts.
func TestStandInRefusal(t *testing.T) {
	tests := []struct {
		name     string
		standIns []fakesys.SoftRoCE
		want     []string // in the error; none: no error
	}{
		{name: "none"},
		{name: "one on eth1", standIns: []fakesys.SoftRoCE{{RDMA: "rxe_r0", Netdev: "eth1"}},
			want: []string{"softRoCE: RDMA device rxe_r0 sits on netdev eth1", "rdma link delete rxe_r0", "ENODEV"}},
		{name: "one on each rail NIC", standIns: []fakesys.SoftRoCE{{RDMA: "rxe_r0", Netdev: "eth1"}, {RDMA: "rxe_r1", Netdev: "eth2"}},
			want: []string{"rdma link delete rxe_r0", "rdma link delete rxe_r1"}},
		{name: "one on a veth", standIns: []fakesys.SoftRoCE{{RDMA: "rxe9", Netdev: "veth9"}}, want: []string{"rdma link delete rxe9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := topology.DiscoverWith(softRoCEVM(t, tt.standIns...), topology.Options{NetdevNICs: true})
			if err != nil {
				t.Fatal(err)
			}
			err = standInRefusal(m)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("not refused, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestSoftRoCENICs: a node whose node class turns softRoCE on (the
// inventory was read before the class was known) reads its NICs again
// with the netdev-only ones (and one a class turns off without them); one
// already read so, or not in softRoCE mode, is left as it is; later link
// events read a NIC's netdev as the setting says.
func TestSoftRoCENICs(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	discover, err := discoverer("", log)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		atStart    bool // the top-level softRoCE
		softRoCE   bool // after the node class
		wantNICs   string
		wantReread bool
	}{
		{name: "turned on by the node class", softRoCE: true, wantNICs: "eth0 eth1 eth2", wantReread: true},
		{name: "on at start", atStart: true, softRoCE: true, wantNICs: "eth0 eth1 eth2"},
		{name: "off", wantNICs: ""},
		{name: "turned off by the node class", atStart: true, wantNICs: "", wantReread: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := inventory.New(softRoCEVM(t), discover(tt.atStart), nil)
			if err != nil {
				t.Fatal(err)
			}
			before := inv.Current().Version
			if err := softRoCENICs(inv, &config.Config{SoftRoCE: tt.softRoCE}, discover, log); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, n := range inv.Machine().NICs {
				names = append(names, n.Name)
			}
			if got := strings.Join(names, " "); got != tt.wantNICs {
				t.Errorf("NICs %q, want %q", got, tt.wantNICs)
			}
			if reread := inv.Current().Version != before; reread != tt.wantReread {
				t.Errorf("read again: %v, want %v", reread, tt.wantReread)
			}
			if inv.Machine().NetdevNICs != tt.softRoCE {
				t.Errorf("machine counts netdev NICs: %v, want %v", inv.Machine().NetdevNICs, tt.softRoCE)
			}
			// a link event of eth1 later reads it as the setting says
			inv.Update("link event", []string{"eth1"})
			if _, listed := inv.Machine().NICByName("eth1"); listed != tt.softRoCE {
				t.Errorf("after eth1's link event: listed %v, want %v", listed, tt.softRoCE)
			}
		})
	}
}

// TestReadinessSoftRoCENetdevNIC: a lease on a softRoCE node's netdev-only
// NIC is checked at the pod's own rxe (port 1, RoCE), never at the NIC,
// which has no RDMA port.
func TestReadinessSoftRoCENetdevNIC(t *testing.T) {
	m, err := topology.DiscoverWith(softRoCEVM(t), topology.Options{NetdevNICs: true})
	if err != nil {
		t.Fatal(err)
	}
	leases := []ipam.Lease{{Sandbox: "s1", IfName: "rail0", Mode: "macvlan", Address: netip.MustParsePrefix("10.0.0.1/24"),
		NICs: []string{"eth1"}, Netns: "/var/run/netns/s1"}}
	r := &railReadiness{placed: attached.NewPlacements(nil), leases: func() []ipam.Lease { return leases }, rdmaNetns: rdma.NetnsShared, softRoCE: true}
	pods := r.pods(m)
	if len(pods) != 1 || len(pods[0].Rails) != 1 {
		t.Fatalf("pods %+v", pods)
	}
	rail := pods[0].Rails[0]
	if want := rdma.SoftRoCEName("s1", "rail0"); rail.Device != want || rail.Port != 1 || rail.LinkLayer != topology.Ethernet {
		t.Errorf("rail checks %s port %d %s, want %s port 1 Ethernet", rail.Device, rail.Port, rail.LinkLayer, want)
	}
}
