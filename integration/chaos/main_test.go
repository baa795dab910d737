package chaos

import (
	"os"
	"testing"

	"github.com/railcni/rail/integration/harness"
)

// bins is set once by TestMain before any test runs, then only read.
var bins harness.Bins

func TestMain(m *testing.M) {
	os.Exit(harness.RunRootTests(m, "integration/chaos", &bins))
}

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces, veth and macvlan links (run as root; make test does)")
	}
}
