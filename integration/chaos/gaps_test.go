package chaos

import "testing"

// TestLeaseFreedAfterDelWithRaildDown tears one pod of each kind down the
// way the chaos makes zombies: DEL while raild is down (it succeeds
// without reaching raild), raild back, the netns removed, CNI GC with the
// pod no longer valid. The lease must be gone.
//
// Under upstream macvlan (v1.9.1 has no GC verb: "FIXME GC") GC never
// reaches rail-ipam; the rail-ipam lease used to stay until raild's next
// restart (raild freed leases of gone netns only at start). raild now frees
// them with every CNI GC it gets (here: the rail networks') and on a timer.
func TestLeaseFreedAfterDelWithRaildDown(t *testing.T) {
	f := newFleet(t)
	for _, k := range f.kinds {
		t.Run(k.name, func(t *testing.T) {
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
