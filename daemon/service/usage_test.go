package service

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// usageEnv is a service whose lease file, netns and restarts a test drives.
type usageEnv struct {
	t      *testing.T
	root   string
	path   string
	pools  *ipam.Pools
	netns  *sync.Map // netns path -> true while it exists
	svc    *Service
	seen   map[string]bool // every sandbox that ever asked
	allocs []*ipam.Allocator
}

func newUsageEnv(t *testing.T, machine string, pools []ipam.PoolConfig) *usageEnv {
	t.Helper()
	e := &usageEnv{t: t, root: t.TempDir(), path: filepath.Join(t.TempDir(), "leases.db"), netns: &sync.Map{}, seen: map[string]bool{}}
	if _, err := fakesys.Write(e.root, machine, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	p, err := ipam.NewPools(pools, "node1")
	if err != nil {
		t.Fatal(err)
	}
	e.pools = p
	t.Cleanup(func() {
		for _, a := range e.allocs {
			a.Close()
		}
	})
	e.start()
	return e
}

// start opens the lease file and builds a service on it, as raild does.
func (e *usageEnv) start() {
	e.t.Helper()
	m, err := topology.Discover(e.root)
	if err != nil {
		e.t.Fatal(err)
	}
	alloc, err := ipam.Open(e.path, e.pools, ipam.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.allocs = append(e.allocs, alloc)
	exists := func(path string) bool { _, ok := e.netns.Load(path); return ok }
	if e.svc, err = New(Options{Machine: fixed(m), Alloc: alloc, NetnsExists: exists}); err != nil {
		e.t.Fatal(err)
	}
}

// recoverLeases stops the service, rebuilds the lease file from what the
// pods hold (`raild leases --recover`) and starts again.
func (e *usageEnv) recoverLeases() {
	e.t.Helper()
	leases := e.allocs[len(e.allocs)-1].Leases()
	if err := e.allocs[len(e.allocs)-1].Close(); err != nil {
		e.t.Fatal(err)
	}
	if _, err := ipam.Rebuild(e.path, e.pools, leases, time.Now()); err != nil {
		e.t.Fatal(err)
	}
	e.start()
}

// add is one ADD: mode on the GPUs, in network; the pod's netns exists.
func (e *usageEnv) add(sandbox, network string, mode api.Mode, gpus string) error {
	req := allocReq(sandbox, gpus)
	req.Network, req.Mode, req.Netns = network, mode, "/run/netns/"+sandbox
	e.netns.Store(req.Netns, true)
	e.seen[sandbox] = true
	_, err := e.svc.Allocate(context.Background(), req)
	return err
}

func (e *usageEnv) mustAdd(sandbox, network string, mode api.Mode, gpus string) {
	e.t.Helper()
	if err := e.add(sandbox, network, mode, gpus); err != nil {
		e.t.Fatalf("ADD %s: %v", sandbox, err)
	}
}

// check compares every view of the NICs' use the service gives (placement
// and the inventory: NICHolders; NRI: NICMovedTo, SandboxLeases) with
// what the leases say.
func (e *usageEnv) check(step string) {
	e.t.Helper()
	leases := e.svc.Leases()
	holders, moved, ifnames := map[string][]string{}, map[string]string{}, map[string][]string{}
	for _, l := range leases {
		for _, nic := range l.NICs {
			if pod := podName(l.PodNamespace, l.PodName, l.Sandbox); !slices.Contains(holders[nic], pod) {
				holders[nic] = append(holders[nic], pod)
			}
			if l.Mode.Exclusive() {
				moved[nic] = l.Sandbox
			}
		}
		ifnames[l.Sandbox] = append(ifnames[l.Sandbox], l.IfName)
	}
	want := map[string]string{}
	for nic, pods := range holders {
		sort.Strings(pods)
		want[nic] = strings.Join(pods, ", ")
	}
	if got := e.svc.NICHolders(); fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Errorf("%s: NICHolders = %v, the leases say %v", step, got, want)
	}
	for _, nic := range e.svc.Machine().NICs {
		sb, ok := e.svc.NICMovedTo(nic.Name)
		if wantSB, wantOK := moved[nic.Name]; sb != wantSB || ok != wantOK {
			e.t.Errorf("%s: NICMovedTo(%s) = %q, %v; the leases say %q, %v", step, nic.Name, sb, ok, wantSB, wantOK)
		}
	}
	for sb := range e.seen {
		var got []string
		for _, l := range e.svc.SandboxLeases(sb) {
			got = append(got, l.IfName)
		}
		if !slices.Equal(got, ifnames[sb]) {
			e.t.Errorf("%s: SandboxLeases(%s) = %v, the leases say %v", step, sb, got, ifnames[sb])
		}
	}
}

// TestUsageIsTheLeases releases and allocates through every path and
// checks after each step that what placement, NRI and the inventory are
// told equals what the leases say, and that a NIC freed by any path can be
// moved into the next pod.
func TestUsageIsTheLeases(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		machine string
		pools   []ipam.PoolConfig
		run     func(e *usageEnv) // leaves mlx5_0 free
	}{
		{name: "CNI DEL", run: func(e *usageEnv) {
			e.mustAdd("a", "net", api.ModeMove, "0")
			e.check("after ADD")
			if err := e.svc.Release(ctx, api.AttachmentRequest{Sandbox: "a", CNIIfName: "eth0", Network: "net"}); err != nil {
				e.t.Fatal(err)
			}
		}},
		{name: "CNI GC", run: func(e *usageEnv) {
			e.mustAdd("a", "net", api.ModeMove, "0")
			e.mustAdd("b", "net", api.ModeMove, "4")
			e.check("after ADDs")
			if _, err := e.svc.GC(ctx, api.GCRequest{Network: "net", Valid: []api.Attachment{{Sandbox: "b", CNIIfName: "eth0"}}}); err != nil {
				e.t.Fatal(err)
			}
		}},
		{name: "reconcile: netns gone", run: func(e *usageEnv) {
			e.mustAdd("a", "net", api.ModeMove, "0")
			e.check("after ADD")
			e.netns.Delete("/run/netns/a")
			if err := e.svc.Reconcile(); err != nil {
				e.t.Fatal(err)
			}
		}},
		{name: "NRI: sandbox stopped, netns gone", run: func(e *usageEnv) {
			e.mustAdd("a", "net", api.ModeMove, "0")
			e.netns.Delete("/run/netns/a")
			if err := e.svc.ReleaseSandbox(ctx, "a"); err != nil {
				e.t.Fatal(err)
			}
		}},
		{name: "recovered lease file, then DEL", run: func(e *usageEnv) {
			e.mustAdd("a", "net", api.ModeMove, "0")
			e.recoverLeases()
			e.check("after recovery")
			e.mustAdd("c", "net", api.ModeMove, "0")
			if sb, _ := e.svc.NICMovedTo("mlx5_0"); sb != "a" {
				e.t.Fatalf("a recovered move lease did not keep its NIC: mlx5_0 moved to %q", sb)
			}
			if err := e.svc.Release(ctx, api.AttachmentRequest{Sandbox: "a", CNIIfName: "eth0", Network: "net"}); err != nil {
				e.t.Fatal(err)
			}
		}},
		{name: "failed commit: pool exhausted midway", pools: []ipam.PoolConfig{
			{Name: "rail", Subnet: "10.77.0.0/24", Ranges: []ipam.RangeConfig{{Start: "10.77.0.10", End: "10.77.0.10"}}}},
			run: func(e *usageEnv) {
				if err := e.add("a", "net", api.ModeMove, "0,2"); !api.IsCode(err, api.CodePoolExhausted) {
					e.t.Fatalf("two NICs from a one-address pool: %v, want pool exhausted", err)
				}
			}},
		{name: "failed commit: interface name taken keeps the other lease's NIC", machine: "lab-1x1", run: func(e *usageEnv) {
			e.mustAdd("a", "n1", api.ModeMacvlan, "0")
			if err := e.add("a", "n2", api.ModeMacvlan, "0"); !api.IsCode(err, api.CodeInvalidConfig) {
				e.t.Fatalf("second network with the same interface names: %v, want invalid ifPrefix", err)
			}
			e.check("after the refused ADD")
			if err := e.add("c", "net", api.ModeMove, "0"); !api.IsCode(err, api.CodeNoNIC) {
				e.t.Fatalf("moved a NIC a macvlan lease still uses: %v", err)
			}
			e.check("after the refused move")
			if err := e.svc.Release(ctx, api.AttachmentRequest{Sandbox: "a", CNIIfName: "eth0", Network: "n1"}); err != nil {
				e.t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			machine, pools := tt.machine, tt.pools
			if machine == "" {
				machine = "h100x8-cx7x4"
			}
			if pools == nil {
				pools = onePool()
			}
			e := newUsageEnv(t, machine, pools)
			tt.run(e)
			e.check("after the release")
			e.mustAdd("next", "net", api.ModeMove, "0")
			e.check("after the next ADD")
			if sb, _ := e.svc.NICMovedTo("mlx5_0"); sb != "next" {
				t.Fatalf("mlx5_0 moved to %q, want the next pod", sb)
			}
		})
	}
}

// TestConcurrentAddsForTheLastMoveNIC: many ADDs race for the node's only
// NIC in move mode while others want it shared; the leases never show it
// moved and shared at once, exactly one move wins when no one shares it,
// and every view equals the leases afterwards.
func TestConcurrentAddsForTheLastMoveNIC(t *testing.T) {
	tests := []struct {
		name    string
		shared  int // macvlan ADDs racing the moves
		release bool
	}{
		{name: "moves only"},
		{name: "moves and macvlans", shared: 8},
		{name: "moves, macvlans and NRI releases", shared: 8, release: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newUsageEnv(t, "lab-1x1", onePool())
			for i := range 16 + tt.shared {
				e.seen[fmt.Sprint("s", i)] = true
			}
			var wg sync.WaitGroup
			var moved, failed sync.Map
			for i := range 16 + tt.shared {
				sb, mode := fmt.Sprint("s", i), api.ModeMove
				if i >= 16 {
					mode = api.ModeMacvlan
				}
				wg.Go(func() {
					req := allocReq(sb, "0")
					req.Mode = mode
					_, err := e.svc.Allocate(context.Background(), req)
					switch {
					case err == nil && mode == api.ModeMove:
						moved.Store(sb, true)
					case err != nil && !api.IsCode(err, api.CodeNoNIC):
						failed.Store(sb, err)
					}
				})
				if tt.release {
					wg.Go(func() {
						if err := e.svc.ReleaseSandbox(context.Background(), sb); err != nil {
							failed.Store(sb+" release", err)
						}
					})
				}
			}
			wg.Wait()
			failed.Range(func(k, v any) bool { t.Errorf("%v: %v", k, v); return true })
			e.check("after the race")
			modes := map[api.Mode]int{}
			for _, l := range e.svc.Leases() {
				modes[l.Mode]++
			}
			if modes[api.ModeMove] > 1 || (modes[api.ModeMove] == 1 && modes[api.ModeMacvlan] > 0) {
				t.Fatalf("mlx5_0 leased as %v: moved into two pods, or moved and shared", modes)
			}
			wins := 0
			moved.Range(func(any, any) bool { wins++; return true })
			if tt.shared == 0 && wins != 1 {
				t.Fatalf("%d pods got the only NIC in move mode, want exactly 1", wins)
			}
		})
	}
}
