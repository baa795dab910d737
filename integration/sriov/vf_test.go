package sriov

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
)

func ptr[T any](v T) *T { return &v }

// podVF is one pod's VF: the spec attach gets and the PF it sits on.
type podVF struct {
	pf, pci string
	index   int
	spec    attach.Spec
}

func vfSpec(t *testing.T, pfIndex, vf int, addr string, c attach.VFConfig) podVF {
	t.Helper()
	pf := rigPFs[pfIndex]
	netdev, err := waitVFNetdev(pf.pci, vf)
	if err != nil {
		t.Fatal(err)
	}
	return podVF{pf: pf.name, pci: pf.pci, index: vf, spec: attach.Spec{Mode: attach.ModeVF, Parent: netdev, Name: "rail0", MTU: 1400,
		Addresses: []netip.Prefix{netip.MustParsePrefix(addr)}, VF: &attach.VF{PF: pf.name, Index: vf, Config: c}}}
}

// every setting igb takes, as a pool asking for all of them would
func igbConfig(mac string) attach.VFConfig {
	hw, _ := net.ParseMAC(mac)
	return attach.VFConfig{MAC: hw, VLAN: ptr(100), QoS: 3, Spoofchk: ptr(false), Trust: ptr(true), MaxTxRate: ptr(uint32(100))}
}

// TestVFAttachDetachOnIGB: two pods get VFs of two PFs through the real
// sequence (igb's PF driver, igbvf VFs); what the pool asked reads back
// from the PF with iproute2; the pods talk over VLAN 100 across the
// emulated wire; DEL restores every attribute of each VF and its netdev.
func TestVFAttachDetachOnIGB(t *testing.T) {
	inGuest(t)
	pods := []podVF{
		vfSpec(t, 0, 1, "10.70.0.1/24", igbConfig(api.LeaseMAC("sandbox-a", "rail0").String())),
		vfSpec(t, 1, 1, "10.70.0.2/24", igbConfig(api.LeaseMAC("sandbox-b", "rail0").String())),
	}
	netns := []string{newPodNetns(t, "sriov-a"), newPodNetns(t, "sriov-b")}
	var before, netdevBefore []string
	for _, p := range pods {
		before = append(before, readVF(t, p.pf, p.index).String())
		netdevBefore = append(netdevBefore, netdevState(t, p.pci, p.index))
	}
	for i, p := range pods {
		all, err := attach.AttachAll(netns[i], []attach.Spec{p.spec})
		if err != nil {
			t.Fatalf("Attach %s VF %d: %v", p.pf, p.index, err)
		}
		res := all[0].Result
		got := readVF(t, p.pf, p.index)
		want := fmt.Sprintf("mac %s vlan 100 qos 3 max_tx 100 min_tx 0 spoofchk false link_state auto trust true", p.spec.VF.Config.MAC)
		if got.String() != want {
			t.Errorf("%s VF %d after Attach: %s, want %s", p.pf, p.index, got, want)
		}
		if res.MAC != p.spec.VF.Config.MAC.String() || res.MTU != 1400 {
			t.Errorf("pod interface %+v, want the admin MAC and MTU 1400", res)
		}
		t.Logf("%s VF %d in pod %s: %s", p.pf, p.index, netns[i], got)
	}
	if out, err := run("ip", "netns", "exec", "sriov-a", "ping", "-c", "3", "-W", "3", "10.70.0.2"); err != nil {
		t.Errorf("pods on VLAN 100 over VFs of two PFs cannot talk: %v", err)
	} else {
		t.Logf("ping over the VFs: %s", lastLine(out))
	}
	// The VLAN is the PF's doing: a pod on VLAN 200 does not reach them.
	other := vfSpec(t, 1, 0, "10.70.0.3/24", attach.VFConfig{VLAN: ptr(200)})
	otherNetns := newPodNetns(t, "sriov-c")
	if _, err := attach.AttachAll(otherNetns, []attach.Spec{other.spec}); err != nil {
		t.Fatalf("Attach on VLAN 200: %v", err)
	}
	if _, err := run("ip", "netns", "exec", "sriov-c", "ping", "-c", "2", "-W", "2", "10.70.0.2"); err == nil {
		t.Errorf("a pod on VLAN 200 reaches one on VLAN 100")
	}
	if err := attach.Detach(otherNetns, attach.Spec{Mode: attach.ModeVF, Name: "rail0", VF: &attach.VF{PF: other.pf, Index: other.index}}); err != nil {
		t.Fatalf("Detach of the VLAN 200 pod: %v", err)
	}
	for i, p := range pods {
		if err := attach.Detach(netns[i], attach.Spec{Mode: attach.ModeVF, Name: "rail0", VF: &attach.VF{PF: p.pf, Index: p.index}}); err != nil {
			t.Fatalf("Detach %s VF %d: %v", p.pf, p.index, err)
		}
		if got := readVF(t, p.pf, p.index).String(); got != before[i] {
			t.Errorf("%s VF %d after Detach: %s, want as before: %s", p.pf, p.index, got, before[i])
		}
		if got := netdevState(t, p.pci, p.index); got != netdevBefore[i] {
			t.Errorf("VF netdev after Detach: %s, want as before: %s", got, netdevBefore[i])
		}
	}
}

// TestVFDriverRefusalsOnIGB: igb has no link state and no min_tx_rate.
// An ADD that asks for one fails with the driver's answer and leaves the
// VF exactly as it was (the MAC, VLAN and trust it had set undone).
func TestVFDriverRefusalsOnIGB(t *testing.T) {
	inGuest(t)
	tests := []struct {
		name    string
		mutate  func(*attach.VFConfig)
		wantErr string
	}{
		{"link_state", func(c *attach.VFConfig) { c.LinkState = ptr(attach.VFLinkEnable) }, "set link_state of VF 0 of PF pf0 through the PF: operation not supported"},
		{"min_tx_rate", func(c *attach.VFConfig) { c.MinTxRate = ptr(uint32(10)) }, "set min_tx_rate/max_tx_rate of VF 0 of PF pf0 through the PF: invalid argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := igbConfig("0e:72:00:00:00:01")
			tt.mutate(&c)
			p := vfSpec(t, 0, 0, "10.70.1.1/24", c)
			netns := newPodNetns(t, "sriov-refused")
			before, netdevBefore := readVF(t, p.pf, p.index).String(), netdevState(t, p.pci, p.index)
			_, err := attach.AttachAll(netns, []attach.Spec{p.spec})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Attach = %v, want %q", err, tt.wantErr)
			}
			if got := readVF(t, p.pf, p.index).String(); got != before {
				t.Errorf("VF after the failed Attach: %s, want as before: %s", got, before)
			}
			if got := netdevState(t, p.pci, p.index); got != netdevBefore {
				t.Errorf("VF netdev after the failed Attach: %s, want as before: %s", got, netdevBefore)
			}
		})
	}
}

// TestVFBackFromDeadPodOnIGB: a pod netns deleted without DEL; the kernel
// hands the VF back to the host under its pod name, still labelled and
// still configured; raild's sweep (attach.HostVFs) resets its PF-side
// settings and restores its name, MTU and MAC.
func TestVFBackFromDeadPodOnIGB(t *testing.T) {
	inGuest(t)
	p := vfSpec(t, 1, 0, "10.70.2.1/24", igbConfig("0e:72:00:00:00:02"))
	before, netdevBefore := readVF(t, p.pf, p.index).String(), netdevState(t, p.pci, p.index)
	if _, err := run("ip", "netns", "add", "sriov-dies"); err != nil {
		t.Fatal(err)
	}
	if _, err := attach.AttachAll("/run/netns/sriov-dies", []attach.Spec{p.spec}); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	if _, err := run("ip", "netns", "del", "sriov-dies"); err != nil {
		t.Fatal(err)
	}
	var back string
	for range 100 {
		if back = firstEntry(fmt.Sprintf("/sys/bus/pci/devices/%s/virtfn%d/net", p.pci, p.index)); back != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("VF back in the host as %s, PF still says: %s", back, readVF(t, p.pf, p.index))
	hostVFs := attach.NewHostVFsAt("/")
	macs, err := hostVFs.AdminMACs(p.pf)
	if err != nil || macs[p.index].String() != "0e:72:00:00:00:02" {
		t.Fatalf("AdminMACs(%s) = %v, %v; want VF %d with the dead pod's 0e:72:00:00:00:02 (what raild reports as leaked)", p.pf, macs, err, p.index)
	}
	returned, err := hostVFs.ResetReturned(func(string, int) bool { return false })
	if err != nil {
		t.Fatalf("ResetReturned: %v", err)
	}
	if len(returned) != 1 || returned[0].Err != nil || returned[0].PF != p.pf || returned[0].Index != p.index {
		t.Fatalf("ResetReturned = %+v, want this VF reset", returned)
	}
	if got := readVF(t, p.pf, p.index).String(); got != before {
		t.Errorf("VF after the sweep: %s, want as before: %s", got, before)
	}
	if got := netdevState(t, p.pci, p.index); got != netdevBefore {
		t.Errorf("VF netdev after the sweep: %s, want as before: %s", got, netdevBefore)
	}
	if macs, err := hostVFs.AdminMACs(p.pf); err != nil || api.IsLeaseMAC(macs[p.index]) {
		t.Errorf("AdminMACs after the sweep = %v, %v; want no lease MAC left", macs, err)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
