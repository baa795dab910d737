package vfnetdev

import (
	"fmt"
	"net"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/vfpf"
)

// fakePF is a PF with one VF (index 0) whose admin MAC it keeps; setMAC,
// when set, fails SetVFMAC so.
type fakePF struct {
	admin  net.HardwareAddr
	setErr error
	calls  []string
}

func (p *fakePF) VFState(string, int) (vfpf.State, error) { return vfpf.State{MAC: p.admin}, nil }
func (p *fakePF) SetVFMAC(_ string, _ int, mac net.HardwareAddr) error {
	p.calls = append(p.calls, "admin "+mac.String())
	if p.setErr != nil && !vfpf.IsZeroMAC(mac) {
		return p.setErr
	}
	p.admin = append(net.HardwareAddr(nil), mac...)
	return nil
}
func (p *fakePF) SetVFVLAN(string, int, int, int, uint16) error                   { return nil }
func (p *fakePF) SetVFSpoofchk(string, int, bool) error                           { return nil }
func (p *fakePF) SetVFTrust(string, int, bool) error                              { return nil }
func (p *fakePF) SetVFLinkState(string, int, api.VFLinkState) error               { return nil }
func (p *fakePF) SetVFRate(string, int, uint32, uint32) error                     { return nil }
func (p *fakePF) SetVFGUID(string, int, net.HardwareAddr, net.HardwareAddr) error { return nil }

// fakeLinks is the host's one VF netdev; with igb, the VF driver refuses
// a change of its own MAC while the PF holds a nonzero admin MAC.
type fakeLinks struct {
	pf   *fakePF
	link *netlink.Device
	igb  bool
}

func (l *fakeLinks) LinkByName(name string) (netlink.Link, error) {
	if name != l.link.Name {
		return nil, netlink.LinkNotFoundError{}
	}
	return l.link, nil
}
func (l *fakeLinks) LinkByIndex(int) (netlink.Link, error) { return l.link, nil }
func (l *fakeLinks) LinkSetUp(netlink.Link) error          { return nil }
func (l *fakeLinks) LinkSetDown(netlink.Link) error        { return nil }
func (l *fakeLinks) Change(int, string, int) error         { return nil }
func (l *fakeLinks) SetMAC(_ netlink.Link, mac net.HardwareAddr) error {
	l.pf.calls = append(l.pf.calls, "vf sets "+mac.String())
	if l.igb && !vfpf.IsZeroMAC(l.pf.admin) && len(l.pf.admin) > 0 {
		return fmt.Errorf("set mac: %w", unix.EADDRNOTAVAIL)
	}
	l.link.HardwareAddr = append(net.HardwareAddr(nil), mac...)
	return nil
}

// TestMACStep: the MAC step gives the VF's netdev and its admin MAC one
// MAC, on a driver that lets the VF change its own and on one (igb) that
// refuses while the PF holds one (cleared, the VF sets it, the PF again);
// its inverse puts both back as they were; a PF refusing the admin MAC
// fails the step with the netdev's MAC put back.
func TestMACStep(t *testing.T) {
	const own, admin, want = "52:35:f7:89:82:98", "02:aa:00:00:00:02", "02:ee:00:00:00:01"
	tests := []struct {
		name      string
		igb       bool
		admin     string // the PF's before ("": none)
		setErr    error
		wantErr   bool
		wantAdmin string // after Undo
	}{
		{name: "mlx5", wantAdmin: "00:00:00:00:00:00"},
		{name: "igb, no admin MAC", igb: true, wantAdmin: "00:00:00:00:00:00"},
		{name: "igb, an admin's MAC", igb: true, admin: admin, wantAdmin: admin},
		{name: "the PF refuses", setErr: unix.EOPNOTSUPP, wantErr: true, wantAdmin: "00:00:00:00:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pf := &fakePF{setErr: tt.setErr}
			if tt.admin != "" {
				pf.admin = mustMAC(t, tt.admin)
			}
			links := &fakeLinks{pf: pf, igb: tt.igb, link: &netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: "ens1f0v2", HardwareAddr: mustMAC(t, own)}}}
			n := Node{PF: pf, Links: links}
			before, _ := pf.VFState("ens1f0", 0)
			step, was := n.MACStep(vfpf.VF{PF: "ens1f0", Index: 0}, links.link, mustMAC(t, want), before)
			if was.HostMAC.String() != own || was.MAC.String() != macOrZero(pf.admin).String() {
				t.Fatalf("recorded %+v, want the netdev's %s and the admin %v", was, own, pf.admin)
			}
			_, err := step.Do()
			switch {
			case tt.wantErr && err == nil:
				t.Fatalf("Do worked; calls %v", pf.calls)
			case tt.wantErr:
				if links.link.HardwareAddr.String() != own {
					t.Errorf("after the failed Do the netdev has %s, want %s back", links.link.HardwareAddr, own)
				}
				return
			case err != nil:
				t.Fatalf("Do: %v (calls %v)", err, pf.calls)
			}
			if links.link.HardwareAddr.String() != want || pf.admin.String() != want {
				t.Fatalf("after Do: netdev %s admin %s, want both %s (calls %v)", links.link.HardwareAddr, pf.admin, want, pf.calls)
			}
			if err := step.Undo(); err != nil {
				t.Fatalf("Undo: %v (calls %v)", err, pf.calls)
			}
			if links.link.HardwareAddr.String() != own || pf.admin.String() != tt.wantAdmin {
				t.Errorf("after Undo: netdev %s admin %s, want %s %s (calls %v)", links.link.HardwareAddr, pf.admin, own, tt.wantAdmin, pf.calls)
			}
		})
	}
	if err := (Node{PF: &fakePF{}, Links: &fakeLinks{link: &netlink.Device{}}}).RestoreMAC(vfpf.VF{PF: "p"}, MACs{MAC: mustMAC(t, admin), HostMAC: mustMAC(t, own)}, "gone"); err != nil {
		t.Errorf("RestoreMAC of a netdev that is gone: %v", err)
	}
}
