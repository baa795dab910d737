package chaos

import (
	"os"
	"testing"
)

// TestLeaseFreedAfterDelWithRaildDown tears one pod of each kind down the
// way the chaos makes zombies: DEL while raild is down (it succeeds
// without reaching raild), raild back, the netns removed, CNI GC with the
// pod no longer valid. The lease must be gone.
//
// Known gap, kept as found: under upstream macvlan (v1.9.1 has no GC verb:
// "FIXME GC") GC never reaches rail-ipam, and raild frees leases of gone
// netns only at start, so the rail-ipam lease stays until raild's next
// restart. The ipam case runs with RAIL_KNOWN_GAPS=1.
func TestLeaseFreedAfterDelWithRaildDown(t *testing.T) {
	f := newFleet(t)
	for _, k := range f.kinds {
		t.Run(k.name, func(t *testing.T) {
			if !k.gcReaches && os.Getenv("RAIL_KNOWN_GAPS") != "1" {
				t.Skip("known gap: CNI GC does not reach rail-ipam under upstream macvlan (set RAIL_KNOWN_GAPS=1 to see it fail)")
			}
			spec := podSpec{name: "gap-" + k.name, kind: k, pool: pools[1].Name, gpu: k.gpus[0]}
			if k.exclusive && !f.takeMoveSlot() {
				t.Fatal("no move NIC free")
			}
			defer f.done(spec)
			pod, err := f.newSandbox(spec)
			if err != nil {
				t.Fatal(err)
			}
			addr, err := f.add(spec, pod)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.node.Raild.Kill(); err != nil {
				t.Fatal(err)
			}
			delErr := f.del(spec, pod)
			if err := f.node.Raild.Start(); err != nil {
				t.Fatalf("restart raild: %v", err)
			}
			if delErr != nil {
				t.Fatalf("DEL with raild down: %v", delErr)
			}
			if err := f.node.DeletePodNetns(pod); err != nil {
				t.Fatal(err)
			}
			if err := f.gc(nil); err != nil {
				t.Fatal(err)
			}
			for _, l := range mustLeases(t, f) {
				if l.Sandbox == pod.Sandbox {
					t.Errorf("lease %s of %s pod (sandbox %s, network %s) survived DEL with raild down, netns removal and CNI GC (ADD gave %s)",
						l.Address, k.name, pod.Sandbox, l.Network, addr)
				}
			}
			requireNICsHome(t, f, nil, nil)
		})
	}
}
