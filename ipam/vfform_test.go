package ipam

import (
	"slices"
	"testing"
)

// TestOpenUpgradesOldVFLeases: a store an older raild wrote, whose
// vf-mode leases name the VF in NICs (by PCI address, or by RDMA device as
// `raild recover` rebuilt them), is rewritten at open in the current form:
// NICs the PF's port, VF the VF's PCI address, as Options.VFOf finds them.
// A VF the node lacks keeps its name in VF and holds no port; no lease and
// no address is lost, nothing else of a lease changes, the rewrite is on
// disk (a later open without VFOf reads it), and the NIC index counts each
// lease on its port with its VF. Without VFOf nothing is rewritten.
func TestOpenUpgradesOldVFLeases(t *testing.T) {
	vfs := map[string][2]string{ // old NICs[0] -> VF PCI, PF port
		"0000:19:00.2": {"0000:19:00.2", "mlx5_0"},
		"mlx5_9":       {"0000:19:00.3", "mlx5_0"},
	}
	vfOf := func(id string) (string, string, bool) {
		vf, ok := vfs[id]
		return vf[0], vf[1], ok
	}
	type want struct {
		nics []string
		vf   string
	}
	tests := []struct {
		name string
		vfOf func(string) (string, string, bool)
		want map[string]want // by sandbox
	}{
		{name: "rewritten", vfOf: vfOf, want: map[string]want{
			"old":     {[]string{"mlx5_0"}, "0000:19:00.2"},
			"recover": {[]string{"mlx5_0"}, "0000:19:00.3"},
			"gone":    {nil, "0000:ff:00.2"},
			"new":     {[]string{"mlx5_1"}, "0000:1d:00.2"},
			"macvlan": {[]string{"mlx5_0"}, ""},
		}},
		{name: "no node to read", want: map[string]want{
			"old":     {[]string{"0000:19:00.2"}, ""},
			"recover": {[]string{"mlx5_9"}, ""},
			"gone":    {[]string{"0000:ff:00.2"}, ""},
			"new":     {[]string{"mlx5_1"}, "0000:1d:00.2"},
			"macvlan": {[]string{"mlx5_0"}, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.60.0.0/24"}}, "node1")
			a, path := openTest(t, pools, Options{})
			// The old form: what an older raild wrote (no "vf" key: the
			// field is empty and left out of the record).
			var reqs []Request
			for _, r := range []struct{ sandbox, nic, vf, mode string }{
				{"old", "0000:19:00.2", "", "vf"}, {"recover", "mlx5_9", "", "vf"}, {"gone", "0000:ff:00.2", "", "vf"},
				{"new", "mlx5_1", "0000:1d:00.2", "vf"}, {"macvlan", "mlx5_0", "", "macvlan"},
			} {
				req := request(r.sandbox, "net1", "p")
				req.NICs, req.VF, req.Mode, req.MAC = []string{r.nic}, r.vf, r.mode, "02:00:00:00:00:01"
				reqs = append(reqs, req)
			}
			before, err := a.AllocateMany(reqs)
			if err != nil {
				t.Fatal(err)
			}
			must(t, a, a.Close())
			a = reopen(t, path, pools, Options{VFOf: tt.vfOf})
			check := func(a *Allocator, when string) {
				t.Helper()
				got := map[string]Lease{}
				for _, l := range a.Leases() {
					got[l.Sandbox] = l
				}
				for _, b := range before {
					l, ok := got[b.Sandbox]
					w := tt.want[b.Sandbox]
					switch {
					case !ok:
						t.Fatalf("%s: lease of %s lost", when, b.Sandbox)
					case !slices.Equal(l.NICs, w.nics) || l.VF != w.vf:
						t.Errorf("%s: %s holds NICs %v VF %q, want %v %q", when, b.Sandbox, l.NICs, l.VF, w.nics, w.vf)
					case l.Address != b.Address || l.Mode != b.Mode || l.MAC != b.MAC || l.PodName != b.PodName || !l.Created.Equal(b.Created):
						t.Errorf("%s: %s changed beyond its NICs and VF: %+v, was %+v", when, b.Sandbox, l, b)
					}
				}
				indexed := map[string]string{} // sandbox -> the NIC the index counts it on
				a.ReadNICs(func(use NICUse) {
					use.Range(func(nic string, l *Lease) { indexed[l.Sandbox] = nic })
				})
				for sandbox, w := range tt.want {
					if nic := indexed[sandbox]; len(w.nics) == 0 && nic != "" || len(w.nics) > 0 && nic != w.nics[0] {
						t.Errorf("%s: index counts %s on %q, want %v", when, sandbox, nic, w.nics)
					}
				}
			}
			check(a, "open")
			must(t, a, a.Close())
			check(reopen(t, path, pools, Options{}), "reopen")
		})
	}
}
