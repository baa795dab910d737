package doctor

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestDoctorSoftRoCE: on a softRoCE node doctor counts the NICs placed by
// their netdevs, checks each one's netdev state, and fails on an rxe of
// the host's netns among the NICs (a stand-in: it takes the pods'
// rdma_cm), naming the command that deletes it.
func TestDoctorSoftRoCE(t *testing.T) {
	tests := []struct {
		name     string
		standIns []fakesys.SoftRoCE
		down     string
		want     []string // level + what, each once
		wantNot  string   // a level+what prefix that must not appear
	}{
		{name: "clean", want: []string{
			"ok 3 NIC(s) without an RDMA device, placed by their netdevs (softRoCE); 0 RDMA device(s) in /sys/class/infiniband",
			"ok eth1 (Ethernet, no RDMA device) netdev ACTIVE", "ok rdma_cm device"}, wantNot: "fail"},
		{name: "eth2 down", down: "eth2", want: []string{"warn eth2 (Ethernet, no RDMA device) netdev DOWN"}, wantNot: "fail"},
		{name: "a stand-in on eth1", standIns: []fakesys.SoftRoCE{{RDMA: "rxe_r0", Netdev: "eth1"}}, want: []string{
			"ok 2 NIC(s) without an RDMA device, placed by their netdevs (softRoCE); 1 RDMA device(s) in /sys/class/infiniband",
			"fail softRoCE: RDMA device rxe_r0 sits on netdev eth1 in the host's netns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, _ := fakesys.Machine("softroce-vm")
			host.SoftRoCE = tt.standIns
			root := t.TempDir()
			if _, err := fakesys.WriteHost(root, "softroce-vm", host, fakesys.Options{}); err != nil {
				t.Fatal(err)
			}
			if tt.down != "" {
				if err := fakesys.SetNetdevState(root, tt.down, false); err != nil {
					t.Fatal(err)
				}
			}
			m, err := topology.DiscoverWith(root, topology.Options{NetdevNICs: true})
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, c := range topologyChecks(m, root, 0) {
				line := c.level + " " + c.what
				lines = append(lines, line)
				if c.level == "fail" && strings.HasPrefix(c.what, "softRoCE:") && c.fix != "rdma link delete rxe_r0" {
					t.Errorf("fix %q, want rdma link delete rxe_r0", c.fix)
				}
				if tt.wantNot != "" && strings.HasPrefix(line, tt.wantNot) {
					t.Errorf("unexpected %q", line)
				}
			}
			for _, w := range tt.want {
				n := 0
				for _, l := range lines {
					if strings.HasPrefix(l, w) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%q appears %d times, want once:\n%s", w, n, strings.Join(lines, "\n"))
				}
			}
		})
	}
}
