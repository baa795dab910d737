package ipam

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const crashChildEnv = "RAIL_IPAM_CRASH_CHILD_DB"

var crashPool = []PoolConfig{{Name: "p", Subnet: "10.8.0.0/22"}}

// crashChild allocates and releases from 16 goroutines until it is killed,
// printing each result only after the call returned:
// "A sandbox ifname address" and "R sandbox ifname", and "D sandbox ifname"
// before a release starts (after it the lease may be gone at any moment).
func crashChild(path string) {
	pools, err := NewPools(crashPool, "n1")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	a, err := Open(path, pools, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for n := 0; ; n++ {
				sb := fmt.Sprintf("sb-%d-%d", g, n)
				l, err := a.Allocate(request(sb, "rail0", "p"))
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				say("A %s rail0 %s", sb, l.Address.Addr())
				if n%2 == 1 {
					say("D %s rail0", sb)
					if _, err := a.Release(sb, "eth0", "railnet"); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(2)
					}
					say("R %s rail0", sb)
				}
			}
		})
	}
	wg.Wait()
}

// TestCrashSafety SIGKILLs a process while allocations and releases are in
// flight, then reopens its file: every lease a caller was given is there
// exactly once with its address, every completed release is gone, and no
// address is leased twice.
func TestCrashSafety(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "leases.db")
	for round := range 3 { // the same file survives several crashes
		given, releasing, released := runAndKill(t, path, 300)
		a := reopen(t, path, mustPools(t, crashPool, "n1"), Options{})
		leases := a.Leases()
		onDisk := map[Key]netip.Addr{}
		byAddr := map[netip.Addr]Key{}
		for _, l := range leases {
			if k, dup := byAddr[l.Address.Addr()]; dup {
				t.Errorf("round %d: address %s leased to %v and %v", round, l.Address, k, l.Key())
			}
			byAddr[l.Address.Addr()], onDisk[l.Key()] = l.Key(), l.Address.Addr()
		}
		for k, addr := range given {
			got, ok := onDisk[k]
			switch {
			case released[k] && ok:
				t.Errorf("round %d: %v released before the crash but still leased", round, k)
			case ok && got != addr:
				t.Errorf("round %d: %v was given %s, after the crash the file has %s", round, k, addr, got)
			case !ok && !releasing[k]:
				t.Errorf("round %d: %v was given %s and never released, after the crash it is gone", round, k, addr)
			}
		}
		t.Logf("round %d: %d given, %d released before SIGKILL; %d leases on disk", round, len(given), len(released), len(leases))
		// leases whose ADD never returned are garbage for GC; free them all
		if _, err := a.ReleaseIf(func(Lease) bool { return true }); err != nil {
			t.Fatal(err)
		}
		a.Close()
	}
}

// runAndKill starts the child on path, reads until it reported n
// allocations, SIGKILLs it and returns what it reported.
func runAndKill(t *testing.T, path string, n int) (given map[Key]netip.Addr, releasing, released map[Key]bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashSafety$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	given, releasing, released = map[Key]netip.Addr{}, map[Key]bool{}, map[Key]bool{}
	lines := bufio.NewScanner(stdout)
	killed := false
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) == 4 && f[0] == "A":
			given[Key{Sandbox: f[1], IfName: f[2]}] = netip.MustParseAddr(f[3])
		case len(f) == 3 && f[0] == "D":
			releasing[Key{Sandbox: f[1], IfName: f[2]}] = true
		case len(f) == 3 && f[0] == "R":
			released[Key{Sandbox: f[1], IfName: f[2]}] = true
		}
		if len(given) >= n && !killed {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true // keep reading what it wrote before dying
		}
	}
	if err := cmd.Wait(); err == nil || !killed {
		t.Fatalf("child ended by itself (%v) after %d allocations", err, len(given))
	}
	return given, releasing, released
}
