package inventory

import (
	"testing"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestMoveOutTakenOnlyWhileGone: an event that a NIC's netdev left the
// host is taken only while the netdev is still gone; one that comes after
// the netdev is back (a pod's DEL right after its ADD, the return's own
// event in a later burst) reads the NIC's ports instead. And NICsBack (a
// move lease released by the plugin's DEL, which put the netdev back
// first) reads an away NIC's ports at once, without waiting for the
// return's event. Before, the stale departure marked the NIC away until
// the return's event was read, and an ADD in between found no usable NIC
// (the chaos soak: "mlx5_0 no netdev").
func TestMoveOutTakenOnlyWhileGone(t *testing.T) {
	const netdev = "ens1f0np0"
	tests := []struct {
		name     string
		here     bool // the netdev is in raild's netns when the event is read
		back     bool // NICsBack of its device after the event
		wantAway bool
	}{
		{name: "still in the pod: away", here: false, wantAway: true},
		{name: "back already: its ports read", here: true, wantAway: false},
		{name: "away, then released by the DEL: read back", here: false, back: true, wantAway: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if _, err := fakesys.Write(root, "lab-1x1", fakesys.Options{Netdevs: map[string]string{"mlx5_0": netdev}}); err != nil {
				t.Fatal(err)
			}
			inv, err := New(root, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			here := tt.here
			inv.linkHere = func(name string) bool { return name == netdev && here }
			inv.read("link event "+netdev, concern{moves: map[string]netdevMove{netdev: {device: "mlx5_0", away: true}}}, Watch{})
			if tt.back {
				here = true
				inv.NICsBack("NIC back from its pod (CNI DEL)", []string{"mlx5_0"})
			}
			snap := inv.Current()
			nic, ok := snap.Machine.NICByName("mlx5_0")
			if !ok {
				t.Fatal("mlx5_0 gone from the machine")
			}
			gotAway := nic.Netdev == "" && snap.Away[netdev] == "mlx5_0"
			if gotAway != tt.wantAway {
				t.Errorf("mlx5_0 netdev %q, away %v; want away %v", nic.Netdev, snap.Away, tt.wantAway)
			}
			if !tt.wantAway && nic.Netdev != netdev {
				t.Errorf("mlx5_0 netdev %q, want %s", nic.Netdev, netdev)
			}
		})
	}
}
