package recovery

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/statedir"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/netnstest"
)

// withoutSysAdmin runs f on a thread of its own without CAP_SYS_ADMIN in
// its effective set, as raild runs in the chart (no capabilities); the
// thread ends with f (never unlocked, so no other goroutine runs on it).
func withoutSysAdmin(t *testing.T, f func()) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		data[unix.CAP_SYS_ADMIN/32].Effective &^= 1 << (unix.CAP_SYS_ADMIN % 32)
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		f()
		errc <- nil
	}()
	if err := <-errc; err != nil {
		t.Fatalf("drop CAP_SYS_ADMIN: %v", err)
	}
}

// TestNetnsDenied: without CAP_SYS_ADMIN no pod netns can be entered.
// raild recover then refuses to write a store (an empty one would hand
// the pods' addresses out again) and says how to run it; serve's start
// check cannot tell and reports it, and the NIC records still count.
func TestNetnsDenied(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces")
	nsDir := t.TempDir()
	railPod(t, nsDir, "10.66.0.5/24")
	cfgPath := filepath.Join(t.TempDir(), "raild.yaml")
	writeFile(t, cfgPath, "pools:\n  - name: prefill\n    subnet: 10.66.0.0/24\n")
	stateDir := filepath.Join(t.TempDir(), "state")
	var out bytes.Buffer
	var recoverErr, checkErr error
	var problems []string
	cfg := &config.Config{StateDir: stateDir, NetnsDir: nsDir}
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	pools, err := ipam.NewPools([]ipam.PoolConfig{{Name: "prefill", Subnet: "10.66.0.0/24"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	withoutSysAdmin(t, func() {
		recoverErr = run([]string{"--config", cfgPath, "--state-dir", stateDir, "--netns-dir", nsDir}, &out)
		problems, checkErr = CheckLostStore(cfg, pools)
	})
	if recoverErr == nil || !strings.Contains(recoverErr.Error(), "CAP_SYS_ADMIN") || !strings.Contains(recoverErr.Error(), "run raild recover as root") {
		t.Errorf("raild recover without CAP_SYS_ADMIN = %v; want a refusal saying how to run it\n%s", recoverErr, &out)
	}
	if _, err := os.Stat(statedir.LeaseStorePath(stateDir)); err == nil {
		t.Error("raild recover wrote a store without seeing the pods")
	}
	if checkErr != nil || len(problems) != 1 || !strings.Contains(problems[0], "CAP_SYS_ADMIN") {
		t.Errorf("start check without CAP_SYS_ADMIN = %q, %v; want the netns reported, no verdict", problems, checkErr)
	}
	out.Reset()
	if err := run([]string{"--config", cfgPath, "--state-dir", stateDir, "--netns-dir", nsDir}, &out); err != nil ||
		!strings.Contains(out.String(), "with 1 leases") {
		t.Errorf("raild recover with CAP_SYS_ADMIN = %v\n%s; want the pod's lease", err, &out)
	}
}
