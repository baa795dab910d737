package ipam

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// step is one operation of a scripted allocation test.
type step struct {
	do   string // alloc, release, wait
	sb   string
	pool string
	want string        // alloc: address; release: number of leases freed
	err  error         // alloc: errors.Is target
	wait time.Duration // wait: clock advance
}

func TestAllocateScripts(t *testing.T) {
	tiny := PoolConfig{Name: "tiny", Subnet: "10.0.0.0/29", Gateway: "10.0.0.1"}
	sliced := PoolConfig{Name: "sliced", Subnet: "10.0.0.0/24", Nodes: []NodeSlice{
		{Node: "n1", Subnet: "10.0.0.0/30"}, {Node: "n2", Subnet: "10.0.0.4/30"}}}
	tests := []struct {
		name     string
		cfg      []PoolConfig
		node     string
		cooldown time.Duration
		steps    []step
	}{
		{name: "next-fit skips network, gateway, broadcast and wraps", cfg: []PoolConfig{tiny}, steps: []step{
			{do: "alloc", sb: "a", want: "10.0.0.2"}, {do: "alloc", sb: "b", want: "10.0.0.3"},
			{do: "release", sb: "a", want: "1"},
			{do: "alloc", sb: "c", want: "10.0.0.4"}, {do: "alloc", sb: "d", want: "10.0.0.5"},
			{do: "alloc", sb: "e", want: "10.0.0.6"}, {do: "alloc", sb: "f", want: "10.0.0.2"},
			{do: "alloc", sb: "g", err: ErrExhausted},
			{do: "release", sb: "d", want: "1"}, {do: "alloc", sb: "g", want: "10.0.0.5"},
		}},
		{name: "same key gets the same address", cfg: []PoolConfig{tiny}, steps: []step{
			{do: "alloc", sb: "a", want: "10.0.0.2"}, {do: "alloc", sb: "a", want: "10.0.0.2"},
			{do: "alloc", sb: "b", want: "10.0.0.3"}, {do: "alloc", sb: "a", want: "10.0.0.2"},
		}},
		{name: "excludes skipped", cfg: []PoolConfig{{Name: "x", Subnet: "10.0.0.0/28",
			Ranges: []RangeConfig{{Start: "10.0.0.2", End: "10.0.0.10"}}, Exclude: []string{"10.0.0.3", "10.0.0.4/31", "10.0.0.8"}}},
			steps: []step{
				{do: "alloc", sb: "a", pool: "x", want: "10.0.0.2"}, {do: "alloc", sb: "b", pool: "x", want: "10.0.0.6"},
				{do: "alloc", sb: "c", pool: "x", want: "10.0.0.7"}, {do: "alloc", sb: "d", pool: "x", want: "10.0.0.9"},
				{do: "alloc", sb: "e", pool: "x", want: "10.0.0.10"}, {do: "alloc", sb: "f", pool: "x", err: ErrExhausted},
			}},
		{name: "cooldown holds a released address", cfg: []PoolConfig{{Name: "p", Subnet: "10.0.0.0/30"}}, cooldown: time.Minute,
			steps: []step{
				{do: "alloc", sb: "a", pool: "p", want: "10.0.0.1"}, {do: "alloc", sb: "b", pool: "p", want: "10.0.0.2"},
				{do: "release", sb: "a", want: "1"},
				{do: "alloc", sb: "c", pool: "p", err: ErrExhausted},
				{do: "wait", wait: 59 * time.Second}, {do: "alloc", sb: "c", pool: "p", err: ErrExhausted},
				{do: "wait", wait: time.Second}, {do: "alloc", sb: "c", pool: "p", want: "10.0.0.1"},
			}},
		{name: "without cooldown a released address is free at once", cfg: []PoolConfig{{Name: "p", Subnet: "10.0.0.0/30"}},
			steps: []step{
				{do: "alloc", sb: "a", pool: "p", want: "10.0.0.1"}, {do: "alloc", sb: "b", pool: "p", want: "10.0.0.2"},
				{do: "release", sb: "a", want: "1"}, {do: "alloc", sb: "c", pool: "p", want: "10.0.0.1"},
			}},
		{name: "ipv6 /64", cfg: []PoolConfig{{Name: "v6", Subnet: "fd00:10::/64", Gateway: "fd00:10::1"}}, cooldown: time.Hour,
			steps: []step{
				{do: "alloc", sb: "a", pool: "v6", want: "fd00:10::2"}, {do: "alloc", sb: "b", pool: "v6", want: "fd00:10::3"},
				{do: "release", sb: "a", want: "1"}, {do: "alloc", sb: "c", pool: "v6", want: "fd00:10::4"},
			}},
		{name: "ipv6 wraps past the last address", cfg: []PoolConfig{{Name: "v6", Subnet: "fd00::/126"}},
			steps: []step{
				{do: "alloc", sb: "a", pool: "v6", want: "fd00::1"}, {do: "alloc", sb: "b", pool: "v6", want: "fd00::2"},
				{do: "alloc", sb: "c", pool: "v6", want: "fd00::3"}, {do: "release", sb: "a", want: "1"},
				{do: "alloc", sb: "d", pool: "v6", want: "fd00::1"}, {do: "alloc", sb: "e", pool: "v6", err: ErrExhausted},
			}},
		{name: "ipv4 /31 uses both addresses", cfg: []PoolConfig{{Name: "p", Subnet: "10.9.0.0/31"}},
			steps: []step{
				{do: "alloc", sb: "a", pool: "p", want: "10.9.0.0"}, {do: "alloc", sb: "b", pool: "p", want: "10.9.0.1"},
				{do: "alloc", sb: "c", pool: "p", err: ErrExhausted},
			}},
		{name: "node slice", cfg: []PoolConfig{sliced}, node: "n2", steps: []step{
			{do: "alloc", sb: "a", pool: "sliced", want: "10.0.0.4"}, {do: "alloc", sb: "b", pool: "sliced", want: "10.0.0.5"},
			{do: "alloc", sb: "c", pool: "sliced", want: "10.0.0.6"}, {do: "alloc", sb: "d", pool: "sliced", want: "10.0.0.7"},
			{do: "alloc", sb: "e", pool: "sliced", err: ErrExhausted},
		}},
		{name: "node without a slice", cfg: []PoolConfig{sliced}, node: "n3", steps: []step{
			{do: "alloc", sb: "a", pool: "sliced", err: ErrNoNodeSlice},
		}},
		{name: "unknown pool", cfg: []PoolConfig{tiny}, steps: []step{
			{do: "alloc", sb: "a", pool: "nope", err: ErrUnknownPool}, {do: "alloc", sb: "a", pool: "tiny", want: "10.0.0.2"},
		}},
		{name: "release of another sandbox frees nothing", cfg: []PoolConfig{tiny}, steps: []step{
			{do: "alloc", sb: "new", want: "10.0.0.2"}, {do: "release", sb: "old", want: "0"},
			{do: "alloc", sb: "new", want: "10.0.0.2"}, {do: "alloc", sb: "other", want: "10.0.0.3"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			a, _ := openTest(t, mustPools(t, tt.cfg, tt.node), Options{Cooldown: tt.cooldown, Now: clock.Now})
			for i, s := range tt.steps {
				runStep(t, a, clock, i, s, tt.cfg[0].Name)
			}
		})
	}
}

func runStep(t *testing.T, a *Allocator, clock *fakeClock, i int, s step, defaultPool string) {
	t.Helper()
	pool := s.pool
	if pool == "" {
		pool = defaultPool
	}
	switch s.do {
	case "alloc":
		l, err := a.Allocate(request(s.sb, "rail0", pool))
		if s.err != nil {
			if !errors.Is(err, s.err) {
				t.Fatalf("step %d: Allocate(%s) = %v, %v; want %v", i, s.sb, l.Address, err, s.err)
			}
			return
		}
		if err != nil || l.Address.Addr().String() != s.want {
			t.Fatalf("step %d: Allocate(%s) = %v, %v; want %s", i, s.sb, l.Address, err, s.want)
		}
	case "release":
		got, err := a.Release(s.sb, "eth0", "railnet")
		if err != nil || fmt.Sprint(len(got)) != s.want {
			t.Fatalf("step %d: Release(%s) = %d leases, %v; want %s", i, s.sb, len(got), err, s.want)
		}
	case "wait":
		clock.Advance(s.wait)
	}
}

func TestAllocateLeaseFields(t *testing.T) {
	clock := newFakeClock()
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24", Gateway: "10.0.0.1"}}, "n1")
	a, _ := openTest(t, pools, Options{Now: clock.Now})
	req := request("sb1", "rail0", "p")
	req.Netns, req.PodUID = "/var/run/netns/x", "uid-1"
	l, err := a.Allocate(req)
	if err != nil {
		t.Fatal(err)
	}
	want := Lease{Sandbox: "sb1", IfName: "rail0", CNIIfName: "eth0", Network: "railnet", Pool: "p",
		NICs: []string{"mlx5_0"}, Mode: "macvlan", PodNamespace: "ns", PodName: "pod-sb1", PodUID: "uid-1",
		Netns: "/var/run/netns/x", Created: clock.Now()}
	if l.Address.String() != "10.0.0.2/24" || l.Gateway.String() != "10.0.0.1" {
		t.Errorf("Address, Gateway = %s, %s; want 10.0.0.2/24, 10.0.0.1", l.Address, l.Gateway)
	}
	l.Address, l.Gateway = want.Address, want.Gateway
	if fmt.Sprint(l) != fmt.Sprint(want) {
		t.Errorf("lease = %+v\nwant %+v", l, want)
	}
	l.NICs[0] = "mutated"
	if got := a.Get("sb1", "eth0", "railnet"); len(got) != 1 || got[0].NICs[0] != "mlx5_0" {
		t.Errorf("caller's change leaked into the allocator: %+v", got)
	}
}

func TestAllocateErrors(t *testing.T) {
	pools := mustPools(t, []PoolConfig{{Name: "small", Subnet: "10.0.0.0/30"}, {Name: "other", Subnet: "10.1.0.0/24"},
		{Name: "far", Subnet: "10.2.0.0/24", Nodes: []NodeSlice{{Node: "n9", Subnet: "10.2.0.0/25"}}}}, "n1")
	a, _ := openTest(t, pools, Options{})
	for _, sb := range []string{"a", "b"} {
		if _, err := a.Allocate(request(sb, "rail0", "small")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		req  Request
		is   error
		want string
	}{
		{"exhausted names pool and size", request("c", "rail0", "small"), ErrExhausted, `pool "small" exhausted: all 2 addresses are taken (2 leased, 0 cooling`},
		{"unknown pool lists pools", request("c", "rail0", "big"), ErrUnknownPool, `unknown pool "big": want one of: small, other, far`},
		{"empty pool", request("c", "rail0", ""), ErrUnknownPool, "pool name is empty: want one of: small"},
		{"no node slice", request("c", "rail0", "far"), ErrNoNodeSlice, `pool "far" has no addresses on node "n1"`},
		{"conflict", request("a", "rail0", "other"), ErrLeaseConflict, `sandbox "a" interface "rail0" already has a lease from pool "small"`},
		{"empty sandbox", request("", "rail0", "small"), nil, "requests[0].sandbox: empty"},
		{"empty ifname", request("c", "", "small"), nil, "requests[0].ifname: empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.Allocate(tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Allocate = %v, want an error with %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
		})
	}
	var ex *ExhaustedError
	if _, err := a.Allocate(request("c", "rail0", "small")); !errors.As(err, &ex) || ex.Size != 2 || ex.Used != 2 {
		t.Errorf("errors.As ExhaustedError = %+v from %v; want size 2, used 2", ex, err)
	}
	if n := len(a.Leases()); n != 2 {
		t.Errorf("failed allocations left leases behind: %d, want 2", n)
	}
}

func TestAllocateMany(t *testing.T) {
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/29"}}, "n1") // 6 addresses
	a, path := openTest(t, pools, Options{})
	reqs := func(sb string, names ...string) []Request {
		var out []Request
		for _, n := range names {
			out = append(out, request(sb, n, "p"))
		}
		return out
	}
	first, err := a.AllocateMany(reqs("sb1", "rail0", "rail1"))
	if err != nil || len(first) != 2 || first[0].Address.Addr().String() != "10.0.0.1" || first[1].Address.Addr().String() != "10.0.0.2" {
		t.Fatalf("AllocateMany = %v, %v; want 10.0.0.1 and 10.0.0.2", first, err)
	}
	if _, err := a.AllocateMany(reqs("sb2", "rail0", "rail1", "rail2", "rail3", "rail4")); !errors.Is(err, ErrExhausted) {
		t.Fatalf("AllocateMany over the size = %v, want ErrExhausted", err)
	}
	if got := len(a.Leases()); got != 2 {
		t.Fatalf("a failed AllocateMany left %d leases, want 2 (all or nothing)", got)
	}
	again, err := a.AllocateMany(reqs("sb1", "rail0", "rail1", "rail2"))
	if err != nil || addrsOf(again)[Key{Sandbox: "sb1", IfName: "rail0"}] != "10.0.0.1" || addrsOf(again)[Key{Sandbox: "sb1", IfName: "rail2"}] != "10.0.0.3" {
		t.Fatalf("AllocateMany with existing keys = %v, %v; want old addresses kept, rail2 = 10.0.0.3", again, err)
	}
	if _, err := a.AllocateMany(reqs("sb3", "rail0", "rail0")); err == nil || !strings.Contains(err.Error(), "requests[1]: same sandbox") {
		t.Errorf("duplicate keys = %v, want an error naming requests[1]", err)
	}
	if got, err := a.AllocateMany(nil); got != nil || err != nil {
		t.Errorf("AllocateMany(nil) = %v, %v; want nil, nil", got, err)
	}
	a.Close()
	b := reopen(t, path, pools, Options{})
	if got := addrsOf(b.Leases()); len(got) != 3 || got[Key{Sandbox: "sb1", IfName: "rail1"}] != "10.0.0.2" {
		t.Errorf("after reopen leases = %v, want the 3 of sb1", got)
	}
}

func TestClosedAllocator(t *testing.T) {
	a, _ := openTest(t, mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, ""), Options{})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := a.Allocate(request("a", "rail0", "p")); !errors.Is(err, ErrClosed) {
		t.Errorf("Allocate after Close = %v, want ErrClosed", err)
	}
	if _, err := a.Release("a", "eth0", "railnet"); !errors.Is(err, ErrClosed) {
		t.Errorf("Release after Close = %v, want ErrClosed", err)
	}
}
