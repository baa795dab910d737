package rdma

import (
	"regexp"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

// TestSoftRoCEName checks the names of pods' rxe devices: the same lease
// gives the same name, other sandboxes or interfaces other names, each a
// valid RDMA device name marked as rail's, at most 15 characters (UCX
// cuts a longer memory domain name and then finds no device).
func TestSoftRoCEName(t *testing.T) {
	valid := regexp.MustCompile(`^railrxe[0-9a-f]{8}$`)
	leases := []struct{ sandbox, podIf string }{
		{"3f2a", "rail0"}, {"3f2a", "rail1"}, {"3f2b", "rail0"}, {"3f2a", "net1"},
		{"3f2", "arail0"}, // the separator keeps (a, bc) and (ab, c) apart
		{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "rail0"},
	}
	seen := map[string]int{}
	for i, l := range leases {
		name := SoftRoCEName(l.sandbox, l.podIf)
		if !valid.MatchString(name) || !topology.IsPodSoftRoCE(name) || len(name) > 15 {
			t.Errorf("SoftRoCEName(%q, %q) = %q: not a rail rxe name", l.sandbox, l.podIf, name)
		}
		if again := SoftRoCEName(l.sandbox, l.podIf); again != name {
			t.Errorf("SoftRoCEName(%q, %q) = %q then %q", l.sandbox, l.podIf, name, again)
		}
		if j, dup := seen[name]; dup {
			t.Errorf("leases %d and %d share the rxe name %s", j, i, name)
		}
		seen[name] = i
	}
}

// TestUDPTableHasPort reads /proc/net/udp lines as the kernel writes them.
func TestUDPTableHasPort(t *testing.T) {
	const table = `   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  371: 00000000:12B7 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 20937 2 0000000000000000 0
  372: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 16022 2 0000000000000000 0
`
	tests := []struct {
		port int
		want bool
	}{{4791, true}, {53, true}, {4789, false}, {0x12B, false}}
	for _, tt := range tests {
		got, err := udpTableHasPort(strings.NewReader(table), tt.port)
		if err != nil || got != tt.want {
			t.Errorf("port %d: %v, %v; want %v", tt.port, got, err, tt.want)
		}
	}
}

// TestCheckSoftRoCERefusals: the refusals that need no RDMA kernel name
// the kernel and what is missing.
func TestCheckSoftRoCERefusals(t *testing.T) {
	release := KernelRelease()
	tests := []struct {
		mode NetnsMode
		want []string
	}{
		{NetnsNone, []string{"Linux " + release, "no RDMA subsystem", "rdma_rxe"}},
		{NetnsExclusive, []string{"Linux " + release, "exclusive netns mode", "rdma system set netns shared"}},
	}
	for _, tt := range tests {
		err := CheckSoftRoCE(tt.mode)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("CheckSoftRoCE(%q) = %v, want it to say %q", tt.mode, err, w)
			}
		}
	}
}
