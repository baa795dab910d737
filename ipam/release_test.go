package ipam

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// podLeases allocates the leases of a small scenario: sandbox sb1 has rail0
// and rail1 from CNI_IFNAME eth0 and net1 from a second attachment; sb2 has
// rail0; sb3 is in another network.
func podLeases(t *testing.T, a *Allocator) {
	t.Helper()
	net1 := request("sb1", "net1", "p")
	net1.CNIIfName = "net1"
	other := request("sb3", "rail0", "p")
	other.Network = "othernet"
	reqs := [][]Request{
		{request("sb1", "rail0", "p"), request("sb1", "rail1", "p")},
		{net1}, {request("sb2", "rail0", "p")}, {other},
	}
	for _, r := range reqs {
		if _, err := a.AllocateMany(r); err != nil {
			t.Fatal(err)
		}
	}
}

func keysOf(leases []Lease) string {
	var out []string
	for _, l := range leases {
		out = append(out, l.Sandbox+"/"+l.IfName)
	}
	return strings.Join(out, ",")
}

func TestReleaseVariants(t *testing.T) {
	tests := []struct {
		name     string
		release  func(a *Allocator) ([]Lease, error)
		freed    string
		remained string
	}{
		{"release frees every lease of the attachment",
			func(a *Allocator) ([]Lease, error) { return a.Release("sb1", "eth0", "railnet") },
			"sb1/rail0,sb1/rail1", "sb1/net1,sb2/rail0,sb3/rail0"},
		{"release of an unknown sandbox",
			func(a *Allocator) ([]Lease, error) { return a.Release("sb9", "eth0", "railnet") },
			"", "sb1/net1,sb1/rail0,sb1/rail1,sb2/rail0,sb3/rail0"},
		{"release with another network",
			func(a *Allocator) ([]Lease, error) { return a.Release("sb1", "eth0", "othernet") },
			"", "sb1/net1,sb1/rail0,sb1/rail1,sb2/rail0,sb3/rail0"},
		{"release sandbox frees all its attachments",
			func(a *Allocator) ([]Lease, error) { return a.ReleaseSandbox("sb1") },
			"sb1/net1,sb1/rail0,sb1/rail1", "sb2/rail0,sb3/rail0"},
		{"release if",
			func(a *Allocator) ([]Lease, error) {
				return a.ReleaseIf(func(l Lease) bool { return l.IfName == "rail0" })
			},
			"sb1/rail0,sb2/rail0,sb3/rail0", "sb1/net1,sb1/rail1"},
		{"release if nothing matches",
			func(a *Allocator) ([]Lease, error) { return a.ReleaseIf(func(Lease) bool { return false }) },
			"", "sb1/net1,sb1/rail0,sb1/rail1,sb2/rail0,sb3/rail0"},
		{"gc keeps valid attachments of the network only",
			func(a *Allocator) ([]Lease, error) { return a.GC("railnet", []Key{{Sandbox: "sb1", IfName: "eth0"}}) },
			"sb1/net1,sb2/rail0", "sb1/rail0,sb1/rail1,sb3/rail0"},
		{"gc with no valid attachment",
			func(a *Allocator) ([]Lease, error) { return a.GC("othernet", nil) },
			"sb3/rail0", "sb1/net1,sb1/rail0,sb1/rail1,sb2/rail0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
			a, path := openTest(t, pools, Options{Cooldown: time.Hour})
			podLeases(t, a)
			freed, err := tt.release(a)
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(freed); got != tt.freed {
				t.Errorf("freed %q, want %q", got, tt.freed)
			}
			if tt.freed == "" && freed != nil {
				t.Errorf("freed = %v, want nil", freed)
			}
			if got := keysOf(a.Leases()); got != tt.remained {
				t.Errorf("remaining %q, want %q", got, tt.remained)
			}
			a.Close()
			b := reopen(t, path, pools, Options{Cooldown: time.Hour})
			if got := keysOf(b.Leases()); got != tt.remained {
				t.Errorf("after reopen remaining %q, want %q", got, tt.remained)
			}
			if st := b.Stats()[0]; st.Cooling != uint64(len(freed)) {
				t.Errorf("after reopen cooling = %d, want %d", st.Cooling, len(freed))
			}
		})
	}
}

func TestReleaseArguments(t *testing.T) {
	a, _ := openTest(t, mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1"), Options{})
	if _, err := a.Release("", "eth0", "railnet"); err == nil || !strings.Contains(err.Error(), "sandbox: empty") {
		t.Errorf("Release(\"\") = %v, want sandbox: empty", err)
	}
	if _, err := a.ReleaseSandbox(""); err == nil || !strings.Contains(err.Error(), "sandbox: empty") {
		t.Errorf("ReleaseSandbox(\"\") = %v, want sandbox: empty", err)
	}
}

// A lease replaced between ReleaseIf's snapshot and its write is kept.
func TestReleaseIfSkipsReplacedLease(t *testing.T) {
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
	a, _ := openTest(t, pools, Options{})
	if _, err := a.Allocate(request("sb1", "rail0", "p")); err != nil {
		t.Fatal(err)
	}
	freed, err := a.ReleaseIf(func(l Lease) bool {
		// the pod is deleted and re-added while the reconciler decides
		if _, err := a.Release(l.Sandbox, l.CNIIfName, l.Network); err != nil {
			t.Error(err)
		}
		if _, err := a.Allocate(request(l.Sandbox, l.IfName, "p")); err != nil {
			t.Error(err)
		}
		return true
	})
	if err != nil || freed != nil {
		t.Errorf("ReleaseIf = %v, %v; want nothing freed", freed, err)
	}
	if got := addrsOf(a.Leases()); got[Key{Sandbox: "sb1", IfName: "rail0"}] != "10.0.0.2" {
		t.Errorf("leases = %v, want the new lease 10.0.0.2 kept", got)
	}
}

func TestGetAndStats(t *testing.T) {
	clock := newFakeClock()
	pools := mustPools(t, []PoolConfig{
		{Name: "p", Subnet: "10.0.0.0/24", Gateway: "10.0.0.1", Rail: intp(2), NICs: []string{"mlx5_2"}},
		{Name: "v6", Subnet: "fd00::/64"},
		{Name: "elsewhere", Subnet: "10.5.0.0/24", Nodes: []NodeSlice{{Node: "n2", Subnet: "10.5.0.0/25"}}},
	}, "n1")
	a, _ := openTest(t, pools, Options{Cooldown: time.Minute, Now: clock.Now})
	podLeases(t, a)
	if _, err := a.Allocate(request("sb4", "rail0", "v6")); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(a.Get("sb1", "eth0", "railnet")); got != "sb1/rail0,sb1/rail1" {
		t.Errorf("Get = %s, want sb1/rail0,sb1/rail1", got)
	}
	if got := a.Get("sb1", "eth0", "othernet"); got != nil {
		t.Errorf("Get in another network = %v, want nil", got)
	}
	if _, err := a.Release("sb2", "eth0", "railnet"); err != nil {
		t.Fatal(err)
	}
	stats := a.Stats()
	want := []PoolStat{
		{Name: "p", Subnet: "10.0.0.0/24", Size: 253, Used: 4, Cooling: 1, Free: 248, Rail: intp(2), NICs: []string{"mlx5_2"}},
		{Name: "v6", Subnet: "fd00::/64", Size: 1<<64 - 1, Used: 1, Free: 1<<64 - 2},
		{Name: "elsewhere", Subnet: "10.5.0.0/24", NoNodeSlice: true, Note: `no addresses on node "n1": the pool's nodes do not list it`},
	}
	if len(stats) != len(want) {
		t.Fatalf("Stats = %+v, want %d pools", stats, len(want))
	}
	for i := range want {
		g, w := stats[i], want[i]
		if g.Name != w.Name || g.Subnet != w.Subnet || g.Size != w.Size || g.Used != w.Used || g.Cooling != w.Cooling ||
			g.Free != w.Free || g.NoNodeSlice != w.NoNodeSlice || g.Note != w.Note || !slices.Equal(g.NICs, w.NICs) ||
			(g.Rail == nil) != (w.Rail == nil) || (g.Rail != nil && *g.Rail != *w.Rail) {
			t.Errorf("Stats[%d] = %+v\nwant %+v", i, g, w)
		}
	}
	clock.Advance(time.Minute)
	if st := a.Stats()[0]; st.Cooling != 0 || st.Free != 249 {
		t.Errorf("after the cooldown Stats = %+v, want cooling 0, free 249", st)
	}
}

func TestOpenErrors(t *testing.T) {
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
	_, path := openTest(t, pools, Options{})
	tests := []struct {
		name string
		path string
		opt  Options
		want string
	}{
		{"negative cooldown", path + ".x", Options{Cooldown: -time.Second}, "cooldown -1s: negative"},
		{"locked by the open allocator", path, Options{}, "locked by another process"},
		{"directory in the way", t.TempDir(), Options{}, "ipam: open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Open(tt.path, pools, tt.opt)
			if err == nil {
				a.Close()
				t.Fatalf("Open succeeded, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open = %v, want %q", err, tt.want)
			}
		})
	}
}

// GC runs against a list of attachments taken before an ADD that is still
// writing its lease: that lease must survive, and GC must not wait for it.
func TestGCLeavesInFlightAddAlone(t *testing.T) {
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
	a, _ := openTest(t, pools, Options{})
	if _, err := a.Allocate(request("done", "rail0", "p")); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	inFlight := &entry{lease: newLease(request("adding", "rail0", "p"), a.pools.byName["p"], netip.MustParseAddr("10.0.0.99"), a.now()), busy: make(chan struct{})}
	a.addEntry(inFlight)
	a.mu.Unlock()
	freed, err := a.GC("railnet", nil)
	if err != nil || keysOf(freed) != "done/rail0" {
		t.Errorf("GC = %s, %v; want only done/rail0 freed", keysOf(freed), err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.leases[Key{Sandbox: "adding", IfName: "rail0"}] != inFlight {
		t.Error("GC freed a lease whose ADD was still writing it")
	}
}
