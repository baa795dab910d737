package service

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/vfpf"
	"golang.org/x/sys/unix"
)

// vfPlace is a VF by its PF's netdev and index, as HostVFs names it.
type vfPlace struct {
	pf    string
	index int
}

// fakeHostVFs stands in for the host's VFs: the VFs labelled by rail in
// the host netns (back from dead pods) and each PF's admin MACs. A reset
// clears the VF's admin MAC, as rail's reset of a VF it set does.
type fakeHostVFs struct {
	mu       sync.Mutex
	returned []vfPlace                 // labelled VFs in the host
	macs     map[string]map[int]string // PF netdev -> index -> admin MAC
	resets   []vfPlace                 // what ResetReturned reset
	skipped  []vfPlace                 // what it was told to leave
	cleaned  []vfPlace                 // what ResetUnowned reset
	failing  bool                      // ResetUnowned fails
}

func (f *fakeHostVFs) ResetUnowned(pf string, index int) (vfpf.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mac, err := net.ParseMAC(f.macs[pf][index])
	if err != nil {
		return vfpf.State{}, err
	}
	if f.failing {
		return vfpf.State{MAC: mac}, fmt.Errorf("reset vlan of VF %d of PF %s: %w", index, pf, unix.EIO)
	}
	f.cleaned = append(f.cleaned, vfPlace{pf, index})
	f.macs[pf][index] = "00:00:00:00:00:00"
	return vfpf.State{MAC: mac}, nil
}

func (f *fakeHostVFs) ResetReturned(skip func(pf string, index int) bool) ([]attach.ReturnedVF, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []attach.ReturnedVF
	var left []vfPlace
	for _, p := range f.returned {
		if skip(p.pf, p.index) {
			f.skipped = append(f.skipped, p)
			left = append(left, p)
			continue
		}
		f.resets = append(f.resets, p)
		f.macs[p.pf][p.index] = "00:00:00:00:00:00"
		out = append(out, attach.ReturnedVF{PF: p.pf, Index: p.index, Netdev: "rail0", Host: fmt.Sprintf("%sv%d", p.pf, p.index)})
	}
	f.returned = left
	return out, nil
}

func (f *fakeHostVFs) AdminMACs(pf string) (map[int]net.HardwareAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[int]net.HardwareAddr{}
	for i, s := range f.macs[pf] {
		mac, err := net.ParseMAC(s)
		if err != nil {
			return nil, err
		}
		out[i] = mac
	}
	return out, nil
}

// TestVFSweep: with each reconcile (at start too), a VF back from a pod
// whose netns is gone is reset once that pod's lease is released, a VF a
// live lease holds is left to its DEL, and VFs carrying a lease MAC no
// lease holds, or an admin MAC another VF has, are reported.
func TestVFSweep(t *testing.T) {
	fake := &fakeHostVFs{macs: map[string]map[int]string{}}
	gone := map[string]bool{}
	svc, _ := newService(t, "h100x8-cx7x8-sriov", onePool(), nil, func(o *Options) {
		o.HostVFs = fake
		o.NetnsExists = func(p string) bool { return !gone[p] }
	})
	m := svc.Machine()
	pfOf := func(vf topology.VF) string {
		pf, _ := m.PFByPCI(vf.PF)
		return pf.Netdev
	}
	for _, pf := range m.PFs {
		fake.macs[pf.Netdev] = map[int]string{}
		for _, vf := range pf.VFs {
			fake.macs[pf.Netdev][vf.Index] = "00:00:00:00:00:00"
		}
	}
	vfOf := func(sandbox, gpu string) (topology.VF, string) {
		req := allocReq(sandbox, gpu)
		req.Mode, req.Netns = api.ModeVF, "/run/netns/"+sandbox
		plan, err := svc.Allocate(context.Background(), req)
		if err != nil {
			t.Fatalf("Allocate %s: %v", sandbox, err)
		}
		vf, _ := m.VFByPCI(plan.Interfaces[0].VF.PCI)
		return vf, plan.Interfaces[0].VF.MAC
	}
	live, liveMAC := vfOf("live", "0")
	dead, deadMAC := vfOf("dead", "1")
	fake.macs[pfOf(live)][live.Index] = liveMAC
	fake.macs[pfOf(dead)][dead.Index] = deadMAC
	// A VF no lease holds with a lease MAC (a pod whose lease was lost),
	// and two VFs sharing an admin MAC.
	pf2 := m.PFs[2]
	fake.macs[pf2.Netdev][pf2.VFs[1].Index] = api.LeaseMAC("lost", "rail0").String()
	pf3 := m.PFs[3]
	fake.macs[pf3.Netdev][pf3.VFs[0].Index] = "02:00:00:00:00:aa"
	fake.macs[pf3.Netdev][pf3.VFs[2].Index] = "02:00:00:00:00:aa"
	// Both VFs are labelled in the host: the dead pod's came back; the
	// live pod's is being detached by its DEL right now.
	fake.returned = []vfPlace{{pfOf(live), live.Index}, {pfOf(dead), dead.Index}}
	gone["/run/netns/dead"] = true

	if err := svc.Reconcile(); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if len(svc.SandboxLeases("dead")) != 0 || len(svc.SandboxLeases("live")) != 1 {
		t.Fatalf("leases: dead %v, live %v; want dead released, live kept", svc.SandboxLeases("dead"), svc.SandboxLeases("live"))
	}
	if want := []vfPlace{{pfOf(dead), dead.Index}}; !slices.Equal(fake.resets, want) {
		t.Errorf("reset %v, want the dead pod's VF %v", fake.resets, want)
	}
	if want := []vfPlace{{pfOf(live), live.Index}}; !slices.Equal(fake.skipped, want) {
		t.Errorf("left %v, want the live pod's VF %v", fake.skipped, want)
	}
	var got []string
	for _, l := range svc.LeakedVFs() {
		got = append(got, l.PCI+" "+l.MAC)
	}
	want := []string{pf2.VFs[1].PCI + " " + api.LeaseMAC("lost", "rail0").String(), pf3.VFs[2].PCI + " 02:00:00:00:00:aa"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("leaked %q, want %q", got, want)
	}
	if r := svc.Topology(); !reflect.DeepEqual(r.LeakedVFs, svc.LeakedVFs()) {
		t.Errorf("raild topo leaked VFs %+v, want %+v", r.LeakedVFs, svc.LeakedVFs())
	}
}

// TestVFSweepAtStart: raild resets a VF back from a dead pod as it starts,
// then reads the node again.
func TestVFSweepAtStart(t *testing.T) {
	fake := &fakeHostVFs{macs: map[string]map[int]string{"ens1f0": {3: "0e:72:00:00:00:01"}}, returned: []vfPlace{{"ens1f0", 3}}}
	var rescans []string
	newService(t, "h100x8-cx7x8-sriov", onePool(), nil, func(o *Options) {
		o.HostVFs = fake
		o.Rescan = func(cause string) { rescans = append(rescans, cause) }
	})
	if want := []vfPlace{{"ens1f0", 3}}; !slices.Equal(fake.resets, want) {
		t.Fatalf("reset at start %v, want %v", fake.resets, want)
	}
	// The VF's netdev has its host name again: the node is read again
	// before any plan names it (the SR-IOV rig's next ADD after a restart
	// named the pod's name otherwise).
	if len(rescans) != 1 {
		t.Fatalf("rescans %q, want one after the reset", rescans)
	}
}
