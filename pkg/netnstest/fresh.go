package netnstest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// freshEnv tells the copy InFreshMountNS starts its parent's mount
// namespace and the test to run: "mnt:[4026531841] TestName/case".
const freshEnv = "RAIL_NETNSTEST_FRESH"

// InFreshMountNS runs body in a copy of the test binary inside a mount
// namespace of its own where Dir is a plain directory again, as on a
// machine where nothing has made it a mount yet (the host's mounts are left
// as they are). The copy runs only the calling test; its failure fails it.
func InFreshMountNS(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	mnt, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	if parent, name, ok := strings.Cut(os.Getenv(freshEnv), " "); ok && name == t.Name() {
		if err := unmountDir(parent, mnt); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // after body's own: what a failed body stranded
			if err := removeStranded(parent, mnt); err != nil {
				t.Error(err)
			}
		})
		body(t)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var run []string
	for _, part := range strings.Split(t.Name(), "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.Command(exe, "-test.run", strings.Join(run, "/"), "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), freshEnv+"="+mnt+" "+t.Name())
	// Go makes every mount of the new namespace private before the exec.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("in a fresh mount namespace: %v\n%s", err, out)
		return
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Errorf("in a fresh mount namespace, %s did not run:\n%s", t.Name(), out)
	}
}

// unmountDir takes every mount off Dir, in this mount namespace only: it
// refuses to when self is the parent's mount namespace.
func unmountDir(parent, self string) error {
	if self == parent {
		return fmt.Errorf("netnstest: %s is set, but this process shares its parent's mount namespace (%s): not unmounting %s", freshEnv, self, Dir)
	}
	for { // stacked mounts come off one by one
		err := unix.Unmount(Dir, unix.MNT_DETACH)
		switch {
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
			return nil // a plain directory now (or none)
		case err != nil:
			return fmt.Errorf("netnstest: unmount %s: %w", Dir, err)
		}
	}
}

// removeStranded unmounts and removes every namespace still mounted in Dir
// once the mounts on Dir itself are off: in this mount namespace, where
// unmountDir took the parent's off first, all of them are this test's.
// The files live on in the parent's Dir otherwise.
func removeStranded(parent, self string) error {
	if err := unmountDir(parent, self); err != nil {
		return err
	}
	raw, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("netnstest: %w", err)
	}
	var errs []error
	for _, line := range strings.Split(string(raw), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 || filepath.Dir(fields[4]) != Dir {
			continue
		}
		path := fields[4]
		if err := unix.Unmount(path, unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("netnstest: unmount stranded %s: %w", path, err))
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("netnstest: remove stranded %s: %w", path, err))
		}
	}
	return errors.Join(errs...)
}
