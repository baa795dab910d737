package netnstest

import (
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
)

// Named makes the named netns for a test (NewNamed, from a locked thread
// that returns to the test's netns) and deletes it when the test ends.
func Named(t testing.TB, name string) netns.NsHandle {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	origin, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer origin.Close()
	ns, err := NewNamed(name)
	if setErr := netns.Set(origin); setErr != nil {
		t.Fatalf("back to the test's netns: %v", setErr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ns.Close()
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete netns %s: %v", name, err)
		}
	})
	return ns
}
