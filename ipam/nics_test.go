package ipam

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// nicView is the NIC index as "nic=sandbox/ifname,..." sorted.
func nicView(a *Allocator) string {
	var out []string
	a.ReadNICs(func(u NICUse) {
		u.Range(func(nic string, l *Lease) { out = append(out, nic+"="+l.Sandbox+"/"+l.IfName) })
	})
	slices.Sort(out)
	return strings.Join(out, ",")
}

// modeView is nicView read through Modes and HoldingIn, with each
// lease's mode, for the NICs named.
func modeView(a *Allocator, nics ...string) string {
	var out []string
	a.ReadNICs(func(u NICUse) {
		for _, nic := range nics {
			u.Modes(nic, func(mode string, n int) bool {
				u.HoldingIn(nic, mode, func(l *Lease) bool {
					out = append(out, fmt.Sprintf("%s=%s/%s:%s", nic, l.Sandbox, l.IfName, l.Mode))
					n--
					return true
				})
				if n != 0 {
					out = append(out, fmt.Sprintf("%s:%s miscounted by %d", nic, mode, n))
				}
				return true
			})
		}
	})
	slices.Sort(out)
	return strings.Join(out, ",")
}

// leaseView is what the leases on disk say, in nicView's form.
func leaseView(leases []Lease) string {
	var out []string
	for _, l := range leases {
		for _, nic := range l.NICs {
			out = append(out, nic+"="+l.Sandbox+"/"+l.IfName)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func onNIC(sandbox, ifname, nic string) Request {
	r := request(sandbox, ifname, "p")
	r.NICs = []string{nic}
	return r
}

func moved(sandbox, ifname, nic string) Request {
	r := onNIC(sandbox, ifname, nic)
	r.Mode = "move"
	return r
}

// TestNICUseFollowsTheLeases: through every way a lease comes and goes,
// the NIC index and ReadSandbox show exactly the leases.
func TestNICUseFollowsTheLeases(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, a *Allocator, path string) *Allocator
	}{
		{"allocate", func(t *testing.T, a *Allocator, _ string) *Allocator { return a }},
		{"release", func(t *testing.T, a *Allocator, _ string) *Allocator {
			_, err := a.Release("sb1", "eth0", "railnet")
			return must(t, a, err)
		}},
		{"release sandbox", func(t *testing.T, a *Allocator, _ string) *Allocator {
			_, err := a.ReleaseSandbox("sb2")
			return must(t, a, err)
		}},
		{"gc", func(t *testing.T, a *Allocator, _ string) *Allocator {
			_, err := a.GC("railnet", []Key{{Sandbox: "sb2", IfName: "eth0"}})
			return must(t, a, err)
		}},
		{"release if", func(t *testing.T, a *Allocator, _ string) *Allocator {
			_, err := a.ReleaseIf(func(l Lease) bool { return l.NICs[0] == "mlx5_1" })
			return must(t, a, err)
		}},
		{"reopen", func(t *testing.T, a *Allocator, path string) *Allocator {
			must(t, a, a.Close())
			return reopen(t, path, a.pools, Options{})
		}},
		{"rebuild", func(t *testing.T, a *Allocator, path string) *Allocator {
			leases := a.Leases()[1:]
			must(t, a, a.Close())
			_, err := Rebuild(path, a.pools, leases, a.now())
			must(t, a, err)
			return reopen(t, path, a.pools, Options{})
		}},
		{"failed write", func(t *testing.T, a *Allocator, _ string) *Allocator {
			must(t, a, a.store.Close())
			if _, err := a.AllocateMany([]Request{onNIC("sb9", "rail0", "mlx5_3")}); err == nil {
				t.Fatal("allocate on a closed file succeeded")
			}
			if _, err := a.Release("sb1", "eth0", "railnet"); err == nil {
				t.Fatal("release on a closed file succeeded")
			}
			return a
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
			a, path := openTest(t, pools, Options{})
			for _, reqs := range [][]Request{
				{onNIC("sb1", "rail0", "mlx5_0"), onNIC("sb1", "rail1", "mlx5_1")},
				{moved("sb2", "rail0", "mlx5_0")},
			} {
				if _, err := a.AllocateMany(reqs); err != nil {
					t.Fatal(err)
				}
			}
			a = tt.run(t, a, path)
			leases := a.Leases()
			if got, want := nicView(a), leaseView(leases); got != want {
				t.Errorf("NIC index %q, the leases say %q", got, want)
			}
			var withModes []string
			for _, l := range leases {
				withModes = append(withModes, fmt.Sprintf("%s=%s/%s:%s", l.NICs[0], l.Sandbox, l.IfName, l.Mode))
			}
			slices.Sort(withModes)
			if got, want := modeView(a, "mlx5_0", "mlx5_1", "mlx5_3"), strings.Join(withModes, ","); got != want {
				t.Errorf("NIC index by mode %q, the leases say %q", got, want)
			}
			for _, sb := range []string{"sb1", "sb2", "sb9"} {
				var got, want []string
				a.ReadSandbox(sb, func(l *Lease) { got = append(got, l.IfName) })
				for _, l := range leases {
					if l.Sandbox == sb {
						want = append(want, l.IfName)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("ReadSandbox(%s) = %v, the leases say %v", sb, got, want)
				}
			}
		})
	}
}

func must(t *testing.T, a *Allocator, err error) *Allocator {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAllocatePlaced: place sees the NICs other calls hold, reservations
// being written included, so racing callers that each want a NIC nobody
// uses never get the same one; place's error comes back as it is and
// leaves nothing behind.
func TestAllocatePlaced(t *testing.T) {
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/24"}}, "n1")
	a, _ := openTest(t, pools, Options{})
	nics := []string{"mlx5_0", "mlx5_1", "mlx5_2"}
	errNone := errors.New("no free NIC")
	var wg sync.WaitGroup
	got := make(chan string, 16)
	for i := range 16 {
		wg.Go(func() {
			var picked string
			_, err := a.AllocatePlaced(func(u NICUse) ([]Request, error) {
				for _, nic := range nics {
					free := true
					u.Modes(nic, func(string, int) bool { free = false; return false })
					if free {
						picked = nic
						return []Request{onNIC(fmt.Sprint("sb", i), "rail0", nic)}, nil
					}
				}
				return nil, errNone
			})
			switch {
			case err == nil:
				got <- picked
			case !errors.Is(err, errNone):
				t.Errorf("caller %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	close(got)
	seen := map[string]bool{}
	for nic := range got {
		if seen[nic] {
			t.Fatalf("%s handed to two callers", nic)
		}
		seen[nic] = true
	}
	if len(seen) != len(nics) || len(a.Leases()) != len(nics) {
		t.Fatalf("%d NICs handed out, %d leases; want %d of each", len(seen), len(a.Leases()), len(nics))
	}
	if got, want := nicView(a), leaseView(a.Leases()); got != want {
		t.Errorf("NIC index %q, the leases say %q", got, want)
	}
}
