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
