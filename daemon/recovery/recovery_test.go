package recovery

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/statedir"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netnstest"
)

// rsName is "rs" plus random hex: this test's links and netns.
func rsName(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "rs" + hex.EncodeToString(b)
}

// newNetns makes a network namespace bind-mounted at dir/rs<hex>, as a
// runtime keeps a pod's, removed when the test ends.
func newNetns(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, rsName(t))
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Unmount(path, unix.MNT_DETACH)
		_ = os.Remove(path)
	})
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- unix.Mount(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), path, "", unix.MS_BIND, "")
	}()
	if err := <-errc; err != nil {
		t.Fatalf("create netns %s: %v", path, err)
	}
	return path
}

func handleIn(t *testing.T, path string) *netlink.Handle {
	t.Helper()
	h, err := netns.GetFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nl.Close)
	return nl
}

// addVeth adds an up veth (its peer beside it) with addrs in the netns at path.
func addVeth(t *testing.T, path, name string, addrs ...string) {
	t.Helper()
	h := handleIn(t, path)
	link := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: rsName(t)}
	if err := h.LinkAdd(link); err != nil {
		t.Fatalf("add %s: %v", name, err)
	}
	if err := h.LinkSetUp(link); err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		addr, err := netlink.ParseAddr(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.AddrAdd(link, addr); err != nil {
			t.Fatalf("address %s on %s: %v", a, name, err)
		}
	}
}

// attachIn runs attach.Attach with the thread in the stand-in host netns.
func attachIn(t *testing.T, host, pod string, s attach.Spec) {
	t.Helper()
	hostNS, err := ns.GetNS(host)
	if err != nil {
		t.Fatal(err)
	}
	defer hostNS.Close()
	var attachErr error
	if err := hostNS.Do(func(ns.NetNS) error { _, attachErr = attach.AttachAll(pod, []attach.Spec{s}); return nil }); err != nil {
		t.Fatal(err)
	}
	if attachErr != nil {
		t.Fatalf("attach %s: %v", s.Name, attachErr)
	}
}

// TestRecoverLeasesFromPods damages the store, sees raild refuse it in one
// line, then rebuilds it from real pod netns with interfaces made by
// pkg/attach, and sees raild open what was rebuilt.
func TestRecoverLeasesFromPods(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces")
	nsDir, stateDir := t.TempDir(), t.TempDir()
	host := newNetns(t, t.TempDir()) // stands in for the host: outside nsDir
	parent := rsName(t)
	addVeth(t, host, parent)
	owned, legacy, ipamOnly, foreign := newNetns(t, nsDir), newNetns(t, nsDir), newNetns(t, nsDir), newNetns(t, nsDir)
	owner := attach.Owner{Sandbox: "4f0c9a11", CNIIfName: "eth0", Network: "railnet", Pool: "prefill", NIC: "mlx5_0"}
	attachIn(t, host, owned, attach.Spec{Mode: attach.ModeMacvlan, Parent: parent, Name: "rail0",
		Addresses: []netip.Prefix{netip.MustParsePrefix("10.66.0.5/24")}, Owner: owner})
	attachIn(t, host, legacy, attach.Spec{Mode: attach.ModeMacvlan, Parent: parent, Name: "rail0",
		Addresses: []netip.Prefix{netip.MustParsePrefix("10.66.0.6/24")}})
	addVeth(t, ipamOnly, "net1", "10.66.0.7/24")
	addVeth(t, foreign, "eth0", "10.99.0.1/24") // no pool's: not ours
	addVeth(t, foreign, "net2", "10.66.0.5/24") // a pool address already on another pod

	cfgPath := filepath.Join(t.TempDir(), "raild.yaml")
	if err := os.WriteFile(cfgPath, []byte("pools:\n  - name: prefill\n    subnet: 10.66.0.0/24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{StateDir: stateDir}
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	pools, err := ipam.NewPools([]ipam.PoolConfig{{Name: "prefill", Subnet: "10.66.0.0/24"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(stateDir, "leases.db")
	if err := os.WriteFile(store, nil, 0o600); err != nil { // truncated to 0 bytes
		t.Fatal(err)
	}

	_, err = statedir.OpenLeaseStore(cfg, pools, nil)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), store) ||
		!strings.Contains(err.Error(), "raild recover") {
		t.Fatalf("open of an empty store = %v; want one line naming %s and raild recover", err, store)
	}

	var out bytes.Buffer
	args := []string{"--config", cfgPath, "--state-dir", stateDir, "--netns-dir", nsDir}
	if err := run(append(args, "--dry-run"), &out); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if data, _ := os.ReadFile(store); len(data) != 0 {
		t.Fatal("the dry run changed the store")
	}
	out.Reset()
	if err := run(args, &out); err != nil {
		t.Fatalf("recover: %v\n%s", err, &out)
	}
	t.Logf("raild recover:\n%s", &out)
	if !strings.Contains(out.String(), "also on") || !strings.Contains(out.String(), "kept the old file as") {
		t.Errorf("output does not report the conflict and the kept file:\n%s", &out)
	}

	alloc, err := statedir.OpenLeaseStore(cfg, pools, nil)
	if err != nil {
		t.Fatalf("open after recovery: %v", err)
	}
	defer alloc.Close()
	want := map[string]string{ // address → sandbox/ifname attachment network nics mode netns
		"10.66.0.5": "4f0c9a11/rail0 eth0 railnet [mlx5_0] macvlan " + owned,
		"10.66.0.6": "netns:" + filepath.Base(legacy) + "/rail0   [] macvlan " + legacy,
		"10.66.0.7": "netns:" + filepath.Base(ipamOnly) + "/net1   []  " + ipamOnly,
	}
	got := map[string]string{}
	for _, l := range alloc.Leases() {
		got[l.Address.Addr().String()] = fmt.Sprintf("%s/%s %s %s %v %s %s", l.Sandbox, l.IfName, l.CNIIfName, l.Network, l.NICs, l.Mode, l.Netns)
		if l.Pool != "prefill" || l.Address.Bits() != 24 {
			t.Errorf("lease %s: pool %q, prefix /%d; want prefill, /24", l.Address, l.Pool, l.Address.Bits())
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rebuilt leases:\n%v\nwant\n%v", got, want)
	}
	if l, err := alloc.Allocate(ipam.Request{Sandbox: "new", IfName: "rail0", Pool: "prefill"}); err != nil || got[l.Address.Addr().String()] != "" {
		t.Errorf("allocation after recovery = %v, %v; want an address no pod holds", l.Address, err)
	}
	aside, _ := filepath.Glob(store + ".damaged-*")
	if len(aside) != 1 {
		t.Errorf("damaged file kept as %v, want one copy", aside)
	}
}
