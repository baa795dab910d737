package attach

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/vfpf"
)

// The VF tests use a veth end in the host as the VF's netdev (no kernel
// here has an SR-IOV NIC) and a fakePF for its PF's driver.

const testPF = "pf0"

var errInjected = errors.New("injected rdma failure")

func mustMAC(s string) net.HardwareAddr {
	mac, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return mac
}

// allVF is every setting igb accepts, as a pool asking for all of them would.
func allVF() VFConfig {
	return VFConfig{MAC: mustMAC("0e:72:61:00:00:05"), VLAN: ptr(100), QoS: 5, VLANProto: VLANProto8021AD,
		Spoofchk: ptr(false), Trust: ptr(true), MaxTxRate: ptr(uint32(1000))}
}

func vfSpecFor(netdev string, index int, c VFConfig) Spec {
	return Spec{Mode: ModeVF, Parent: netdev, Name: "rail0", MTU: 1400, Addresses: prefixes("10.10.0.5/24"),
		VF: &VF{PF: testPF, Index: index, Config: c}}
}

// delSpec is what DEL knows of a VF: its pod name, PF and index.
func delSpec(s Spec) Spec {
	return Spec{Mode: ModeVF, Name: s.Name, VF: &VF{PF: s.VF.PF, Index: s.VF.Index}}
}

func detachWith(e *testEnv, a attacher, s Spec) error {
	return e.inHost(func() error { return a.detach(e.pod.Path(), s) })
}

func macIn(t *testing.T, n ns.NetNS, name string) string {
	t.Helper()
	return mustLinkIn(t, n, name).Attrs().HardwareAddr.String()
}

// vfWorld is one pod, a VF netdev stand-in and its PF, with what they were.
type vfWorld struct {
	e                    *testEnv
	pf                   *fakePF
	a                    attacher
	netdev               string
	hostBefore, podBefor string // podBefor "": the pod netns is gone
	macBefore            string
	stateBefore          vfpf.State
}

func newVFWorld(t *testing.T) *vfWorld {
	e := newTestEnv(t)
	w := &vfWorld{e: e, pf: newFakePF(testPF, 4), netdev: e.addNIC(1500, true)}
	w.a = attacher{moveRDMA: (&fakeRDMA{}).move, pf: w.pf.control}
	w.hostBefore, w.podBefor = snapshot(t, e.host), snapshot(t, e.pod)
	w.macBefore = macIn(t, e.host, w.netdev)
	w.stateBefore = w.pf.state(2)
	return w
}

// assertAsBefore: the VF's PF-side state, its netdev (name, MTU, state,
// MAC) and both netns are as they were.
func (w *vfWorld) assertAsBefore(t *testing.T, when string) {
	t.Helper()
	if got := w.pf.state(2); !reflect.DeepEqual(got, w.stateBefore) {
		t.Errorf("%s: VF state %+v, want %+v", when, got, w.stateBefore)
	}
	assertSame(t, when+": host netns", w.e.host, w.hostBefore)
	if w.podBefor != "" {
		assertSame(t, when+": pod netns", w.e.pod, w.podBefor)
	}
	if got := macIn(t, w.e.host, w.netdev); got != w.macBefore {
		t.Errorf("%s: VF netdev MAC %s, want %s", when, got, w.macBefore)
	}
}

func TestVFAttachDetach(t *testing.T) {
	tests := []struct {
		name      string
		config    VFConfig
		want      func(before vfpf.State) vfpf.State
		wantCalls []string // the PF calls of the attach
		wantReset []string // the PF calls of the detach
	}{
		{"nothing asked: no PF call", VFConfig{}, func(b vfpf.State) vfpf.State { return b }, nil, nil},
		{"admin MAC, also on the netdev", VFConfig{MAC: mustMAC("0e:72:61:00:00:01")},
			func(b vfpf.State) vfpf.State { b.MAC = mustMAC("0e:72:61:00:00:01"); return b },
			[]string{"mac 0e:72:61:00:00:01"}, []string{"mac 52:35:f7:89:82:02"}},
		{"every setting igb takes, trust set last and reset first", allVF(),
			func(b vfpf.State) vfpf.State {
				b.MAC, b.VLAN, b.QoS, b.VLANProto = mustMAC("0e:72:61:00:00:05"), 100, 5, VLANProto8021AD
				b.Spoofchk, b.Trust, b.MaxTxRate = false, true, 1000
				return b
			},
			[]string{"mac 0e:72:61:00:00:05", "vlan 100 qos 5 proto 0x88a8", "spoofchk false", "rate 0 1000", "trust true"},
			[]string{"trust false", "rate 0 0", "spoofchk true", "vlan 0 qos 0 proto 0x8100", "mac 52:35:f7:89:82:02"}},
		{"vlan 0 with the default protocol", VFConfig{VLAN: ptr(0)}, func(b vfpf.State) vfpf.State { return b },
			[]string{"vlan 0 qos 0 proto 0x8100"}, []string{"vlan 0 qos 0 proto 0x8100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newVFWorld(t)
			s := vfSpecFor(w.netdev, 2, tt.config)
			res, err := attachIn(w.e, w.a, s)
			if err != nil {
				t.Fatalf("Attach: %v", err)
			}
			if got, want := w.pf.state(2), tt.want(w.stateBefore); !reflect.DeepEqual(got, want) {
				t.Errorf("VF state after Attach %+v, want %+v", got, want)
			}
			if calls := w.pf.callLog(); !slices.Equal(calls, tt.wantCalls) {
				t.Errorf("PF calls of Attach %q, want %q", calls, tt.wantCalls)
			}
			pod := mustLinkIn(t, w.e.pod, "rail0")
			wantMAC := w.macBefore
			if tt.config.MAC != nil {
				wantMAC = tt.config.MAC.String()
			}
			if got := pod.Attrs().HardwareAddr.String(); got != wantMAC || res.MAC != wantMAC {
				t.Errorf("pod VF netdev MAC %s (result %s), want %s", got, res.MAC, wantMAC)
			}
			if pod.Attrs().MTU != 1400 || !isUp(pod) {
				t.Errorf("pod VF netdev mtu %d up %v, want 1400 and up", pod.Attrs().MTU, isUp(pod))
			}
			if rec, ok := ReadAlias(pod.Attrs().Alias); !ok || rec.Mode != ModeVF || rec.Host != w.netdev {
				t.Errorf("alias %q reads as %+v, %v; want a vf record of %s", pod.Attrs().Alias, rec, ok, w.netdev)
			}
			if err := w.e.check(s); err != nil {
				t.Errorf("Check after Attach: %v", err)
			}
			n := len(w.pf.callLog())
			if err := detachWith(w.e, w.a, delSpec(s)); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			if calls := w.pf.callLog()[n:]; !slices.Equal(calls, tt.wantReset) {
				t.Errorf("PF calls of Detach %q, want %q", calls, tt.wantReset)
			}
			w.assertAsBefore(t, "after Detach")
			if err := detachWith(w.e, w.a, delSpec(s)); err != nil {
				t.Fatalf("second Detach: %v", err)
			}
			w.assertAsBefore(t, "after the second Detach")
		})
	}
}

// TestVFDriverRefusals: igb has no link state and no min_tx_rate. Asking
// for them fails the ADD with the driver's error, the VF left as it was;
// not asking never calls them.
func TestVFDriverRefusals(t *testing.T) {
	tests := []struct {
		name    string
		config  VFConfig
		wantErr string
	}{
		{"link_state asked", VFConfig{MAC: mustMAC("0e:72:61:00:00:07"), LinkState: ptr(VFLinkEnable)}, "set link_state of VF 2 of PF pf0 through the PF: operation not supported"},
		{"min_tx_rate asked", VFConfig{Trust: ptr(true), MinTxRate: ptr(uint32(10))}, "set min_tx_rate/max_tx_rate of VF 2 of PF pf0 through the PF: invalid argument"},
		{"neither asked", VFConfig{MAC: mustMAC("0e:72:61:00:00:07"), Spoofchk: ptr(false), MaxTxRate: ptr(uint32(50))}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newVFWorld(t)
			s := vfSpecFor(w.netdev, 2, tt.config)
			_, err := attachIn(w.e, w.a, s)
			if !errorMatches(err, tt.wantErr) {
				t.Fatalf("Attach = %v, want %q", err, tt.wantErr)
			}
			if tt.wantErr != "" {
				w.assertAsBefore(t, "after the failed Attach")
				return
			}
			for _, c := range w.pf.callLog() {
				if strings.HasPrefix(c, "state") {
					t.Errorf("link state set though not asked for: %q", w.pf.callLog())
				}
			}
			if err := detachWith(w.e, w.a, delSpec(s)); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			w.assertAsBefore(t, "after Detach")
		})
	}
}

// TestVFAttachFailureLeavesVFAsItWas fails an ADD at each PF call and at
// steps after the move: the VF's PF-side state, its netdev and both netns
// are exactly as before.
func TestVFAttachFailureLeavesVFAsItWas(t *testing.T) {
	tests := []struct {
		name    string
		failAt  int
		spec    func(Spec) Spec
		prepare func(e *testEnv)
		wantErr string
	}{
		{name: "admin MAC refused", failAt: 1, wantErr: "set mac of VF 2"},
		{name: "vlan refused", failAt: 2, wantErr: "set vlan of VF 2"},
		{name: "spoofchk refused", failAt: 3, wantErr: "set spoofchk of VF 2"},
		{name: "rate refused", failAt: 4, wantErr: "set min_tx_rate/max_tx_rate of VF 2"},
		{name: "trust refused", failAt: 5, wantErr: "set trust of VF 2"},
		{name: "route fails after the move", spec: func(s Spec) Spec {
			s.Routes = []Route{route("10.20.0.0/16", "192.168.77.1")}
			return s
		}, wantErr: "add route 10.20.0.0/16 via 192.168.77.1"},
		{name: "rdma device move fails", spec: func(s Spec) Spec {
			s.RDMADevice, s.RDMANetns = "mlx5_12", rdma.NetnsExclusive
			return s
		}, wantErr: "move rdma device mlx5_12"},
		{name: "VF index the PF does not have", spec: func(s Spec) Spec {
			s.VF.Index = 9
			return s
		}, wantErr: "read VF 9 of PF pf0"},
		{name: "PF not in the host netns", spec: func(s Spec) Spec {
			s.VF.PF = "pfgone"
			return s
		}, wantErr: "read VF 2 of PF pfgone"},
		{name: "VF without a netdev (vfio-pci)", spec: func(s Spec) Spec {
			s.Parent = ""
			return s
		}, wantErr: "has no netdev in the host netns (bound to vfio-pci"},
		{name: "pod name taken", prepare: func(e *testEnv) { e.addPodVeth("rail0") }, wantErr: "already has an interface named rail0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			if tt.prepare != nil {
				tt.prepare(e)
			}
			w := &vfWorld{e: e, pf: newFakePF(testPF, 4), netdev: e.addNIC(1500, true)}
			w.pf.failAt = tt.failAt
			w.a = attacher{moveRDMA: (&fakeRDMA{failIn: errInjected}).move, pf: w.pf.control}
			w.hostBefore, w.podBefor, w.macBefore, w.stateBefore = snapshot(t, e.host), snapshot(t, e.pod), macIn(t, e.host, w.netdev), w.pf.state(2)
			s := vfSpecFor(w.netdev, 2, allVF())
			if tt.spec != nil {
				s = tt.spec(s)
			}
			_, err := attachIn(e, w.a, s)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Attach = %v, want an error containing %q", err, tt.wantErr)
			}
			t.Logf("Attach error: %v", err)
			w.assertAsBefore(t, "after the failed Attach")
		})
	}
}

// vfBackFromDeadPod attaches a VF with every setting, then does what the
// kernel does when the pod netns dies: the VF's netdev comes back to the
// host under its pod name, still labelled.
func vfBackFromDeadPod(t *testing.T) (*vfWorld, Spec) {
	t.Helper()
	w := newVFWorld(t)
	s := vfSpecFor(w.netdev, 2, allVF())
	if _, err := attachIn(w.e, w.a, s); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	kernelReturnsToHost(t, w.e, s.Name, func(l netlink.Link) string { return l.Attrs().Name })
	removeTestNetns(w.e.pod)
	w.podBefor = "" // gone
	return w, s
}

// TestVFDetachAfterPodNetnsDeleted: the pod netns died without DEL, the
// kernel handed the VF back under its pod name. DEL resets it from its
// label; so does the next ADD of another pod that finds it so, which then
// records the VF's settings from before the first pod, never the first
// pod's.
func TestVFDetachAfterPodNetnsDeleted(t *testing.T) {
	for _, next := range []string{"detach", "attach to another pod", "attach to another pod, planned under the dead pod's name"} {
		t.Run(next, func(t *testing.T) {
			w, s := vfBackFromDeadPod(t)
			if next != "detach" {
				w.e.pod = newTestNetns(t)
				w.podBefor = snapshot(t, w.e.pod)
				parent := w.netdev
				if strings.HasSuffix(next, "name") {
					parent = s.Name // what raild's inventory saw while the VF sat in the host as the pod left it
				}
				other := vfSpecFor(parent, 2, VFConfig{MAC: mustMAC("0e:72:61:00:00:09"), VLAN: ptr(200)})
				if _, err := attachIn(w.e, w.a, other); err != nil {
					t.Fatalf("Attach of the next pod: %v", err)
				}
				s = other
			}
			if err := detachWith(w.e, w.a, delSpec(s)); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			w.assertAsBefore(t, "after Detach")
		})
	}
}

// TestVFResetFailureKeepsLabel: when the PF refuses the reset, DEL fails
// (the lease stays), the VF comes back to the host still labelled, and the
// next DEL resets it.
func TestVFResetFailureKeepsLabel(t *testing.T) {
	w := newVFWorld(t)
	s := vfSpecFor(w.netdev, 2, allVF())
	if _, err := attachIn(w.e, w.a, s); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	w.pf.failFrom = len(w.pf.callLog()) + 1
	err := detachWith(w.e, w.a, delSpec(s))
	if err == nil || !strings.Contains(err.Error(), "reset trust of VF 2 of PF pf0") {
		t.Fatalf("Detach = %v, want the reset's failure", err)
	}
	if l := mustLinkIn(t, w.e.host, w.netdev); !strings.Contains(l.Attrs().Alias, ":pf=pf0:vf=2") {
		t.Fatalf("VF came back without its label: %q", l.Attrs().Alias)
	}
	w.pf.mu.Lock()
	w.pf.failFrom = 0
	w.pf.mu.Unlock()
	if err := detachWith(w.e, w.a, delSpec(s)); err != nil {
		t.Fatalf("second Detach: %v", err)
	}
	w.assertAsBefore(t, "after the second Detach")
}

// TestHostVFsResetReturned: raild's sweep resets a VF the kernel handed
// back from a dead pod (its PF-side settings, name, MTU, MAC) and leaves
// one it is told a lease still holds.
func TestHostVFsResetReturned(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("held=%v", held), func(t *testing.T) {
			w, _ := vfBackFromDeadPod(t)
			h := HostVFs{a: w.a}
			var got []ReturnedVF
			err := w.e.inHost(func() error {
				var err error
				got, err = h.ResetReturned(func(pf string, index int) bool { return held && pf == testPF && index == 2 })
				return err
			})
			if err != nil {
				t.Fatalf("ResetReturned: %v", err)
			}
			if held {
				if len(got) != 0 || !strings.Contains(mustLinkIn(t, w.e.host, "rail0").Attrs().Alias, ":pf=pf0:vf=2") {
					t.Fatalf("held VF touched: %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Err != nil || got[0].PF != testPF || got[0].Index != 2 || got[0].Host != w.netdev || got[0].Netdev != "rail0" {
				t.Fatalf("ResetReturned = %+v", got)
			}
			w.assertAsBefore(t, "after the sweep")
		})
	}
}

// TestVFMACOnIGB models igb's PF driver, which refuses an untrusted VF
// any MAC change of its own once the PF set one (the SR-IOV rig showed
// the first version of this sequence failing there). A VF whose PF set
// no MAC sets its own first, then the PF sets the same (two calls; the
// PF's first cost a refusal, a clear and two more); a VF whose PF holds
// an admin's MAC gets the PF's MAC cleared, sets its own, and the PF sets
// it again. DEL ends as the VF began: its own MAC and no PF-set one, or
// the admin's.
func TestVFMACOnIGB(t *testing.T) {
	const mac = "0e:72:61:00:00:0a"
	tests := []struct {
		name       string
		adminMAC   string // "" : igb reports the VF's own MAC, none PF-set
		wantAttach []string
	}{
		{name: "no PF-set MAC", wantAttach: []string{"vf sets " + mac, "mac " + mac, "vlan 100 qos 0 proto 0x8100"}},
		{name: "an admin's MAC", adminMAC: "02:aa:00:00:00:02", wantAttach: []string{"vf sets " + mac, "mac 00:00:00:00:00:00",
			"vf sets " + mac, "mac " + mac, "vlan 100 qos 0 proto 0x8100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newVFWorld(t)
			w.pf.mu.Lock()
			st := w.pf.vfs[2]
			st.MAC = mustMAC(w.macBefore) // igb reports the VF's own MAC when no admin set one
			if tt.adminMAC != "" {
				st.MAC = mustMAC(tt.adminMAC)
				w.pf.pfSet = map[int]bool{2: true}
			}
			w.pf.vfs[2] = st
			w.pf.mu.Unlock()
			w.stateBefore = w.pf.state(2)
			w.a.setMAC = w.pf.igbVFSetMAC(2)
			s := vfSpecFor(w.netdev, 2, VFConfig{MAC: mustMAC(mac), VLAN: ptr(100)})
			if _, err := attachIn(w.e, w.a, s); err != nil {
				t.Fatalf("Attach: %v", err)
			}
			if got := w.pf.state(2).MAC.String(); got != mac || !w.pf.pfSet[2] {
				t.Errorf("admin MAC %s (PF-set %v), want %s set by the PF", got, w.pf.pfSet[2], mac)
			}
			if got := macIn(t, w.e.pod, "rail0"); got != mac {
				t.Errorf("pod netdev MAC %s, want the admin MAC", got)
			}
			if calls := w.pf.callLog(); !slices.Equal(calls, tt.wantAttach) {
				t.Errorf("calls of Attach %q, want %q", calls, tt.wantAttach)
			}
			if err := detachWith(w.e, w.a, delSpec(s)); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			w.assertAsBefore(t, "after Detach")
			if want := tt.adminMAC != ""; w.pf.pfSet[2] != want {
				t.Errorf("after Detach the PF holds an admin MAC for the VF: %v, want %v", w.pf.pfSet[2], want)
			}
		})
	}
}
