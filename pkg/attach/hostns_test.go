package attach

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/netnstest"
)

func TestHostNetnsRefused(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces")
	own := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
	spec := Spec{Mode: ModeMove, Parent: "rsnoparent0", Name: "net1", Addresses: []netip.Prefix{netip.MustParsePrefix("10.9.0.2/24")}}
	for _, path := range []string{"/proc/self/ns/net", own} {
		if _, err := AttachAll(path, []Spec{spec}); !errors.Is(err, ErrHostNetns) {
			t.Errorf("Attach(%s) = %v, want ErrHostNetns", path, err)
		}
		if err := Detach(path, spec); !errors.Is(err, ErrHostNetns) {
			t.Errorf("Detach(%s) = %v, want ErrHostNetns", path, err)
		}
		if ok, err := IsOwnNetns(path); err != nil || !ok {
			t.Errorf("IsOwnNetns(%s) = %v, %v; want true", path, ok, err)
		}
	}
	if ok, err := IsOwnNetns(filepath.Join(t.TempDir(), "gone")); err != nil || ok {
		t.Errorf("IsOwnNetns(missing) = %v, %v; want false, nil", ok, err)
	}
}
