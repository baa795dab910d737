package netnstest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// TestNeighbourIPNetnsAdd: another program's `ip netns add` while a test's
// namespace exists must not strand it. Each case runs where /run/netns is
// not a mount yet. The control case, netns.NewNamed without ShareDir, shows
// the scenario still reproduces the EBUSY on this kernel.
func TestNeighbourIPNetnsAdd(t *testing.T) {
	RequireRoot(t, "mounts and creates network namespaces")
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("ip (iproute2) is needed: %v", err)
	}
	tests := []struct {
		name     string
		newNamed func(string) (netns.NsHandle, error)
		wantBusy bool
	}{
		{"NewNamed", NewNamed, false},
		{"netns.NewNamed alone", netns.NewNamed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			InFreshMountNS(t, func(t *testing.T) {
				name := fmt.Sprintf("rail-nt-%d", os.Getpid())
				if err := inThread(func() error { h, err := tt.newNamed(name); h.Close(); return err }); err != nil {
					t.Fatal(err)
				}
				ipNetns(t, "add", name+"-neighbour")
				ipNetns(t, "del", name+"-neighbour")
				err := netns.DeleteNamed(name)
				if busy := errors.Is(err, unix.EBUSY); busy != tt.wantBusy || (err != nil && !busy) {
					t.Errorf("delete %s after a neighbour's ip netns add: %v (want EBUSY: %v)", name, err, tt.wantBusy)
				}
				if _, serr := os.Stat(filepath.Join(Dir, name)); err == nil && !errors.Is(serr, os.ErrNotExist) {
					t.Errorf("%s left behind (%v)", filepath.Join(Dir, name), serr)
				} // (InFreshMountNS removes what the control case strands)
			})
		})
	}
}

// TestShareDirIdempotent: a second call (another test process) finds Dir a
// shared mount and leaves it one mount, not two stacked.
func TestShareDirIdempotent(t *testing.T) {
	RequireRoot(t, "mounts and creates network namespaces")
	InFreshMountNS(t, func(t *testing.T) {
		for range 3 {
			if err := ShareDir(); err != nil {
				t.Fatal(err)
			}
		}
		if n := mountsAt(t, Dir); n != 1 {
			t.Errorf("%d mounts at %s after three ShareDir calls, want 1", n, Dir)
		}
	})
}

// inThread runs fn on a locked thread that ends with it (fn may move the
// thread into another namespace).
func inThread(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- fn()
	}()
	return <-done
}

func ipNetns(t *testing.T, verb, name string) {
	t.Helper()
	if out, err := exec.Command("ip", "netns", verb, name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns %s %s: %v: %s", verb, name, err, out)
	}
}

// mountsAt counts the mounts at dir (/proc/self/mountinfo's fifth field).
func mountsAt(t *testing.T, dir string) int {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		var id, parent int
		var devs, root, at string
		if _, err := fmt.Sscan(line, &id, &parent, &devs, &root, &at); err == nil && at == dir {
			n++
		}
	}
	return n
}
