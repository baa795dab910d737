package rdma

import (
	"regexp"
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

// TestSoftRoCEName checks the names of pods' rxe devices: the same lease
// gives the same name, other sandboxes or interfaces other names, each a
// valid RDMA device name marked as rail's.
func TestSoftRoCEName(t *testing.T) {
	valid := regexp.MustCompile(`^railrxe_[0-9a-f]{12}$`)
	leases := []struct{ sandbox, podIf string }{
		{"3f2a", "rail0"}, {"3f2a", "rail1"}, {"3f2b", "rail0"}, {"3f2a", "net1"},
		{"3f2", "arail0"}, // the separator keeps (a, bc) and (ab, c) apart
		{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "rail0"},
	}
	seen := map[string]int{}
	for i, l := range leases {
		name := SoftRoCEName(l.sandbox, l.podIf)
		if !valid.MatchString(name) || !topology.IsPodSoftRoCE(name) {
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
