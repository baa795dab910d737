package attach

import (
	"errors"
	"testing"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/vfpf"
)

// TestNetlinkPFLooksUpOnce: within a session a PF is looked up by name
// once (the reply holds every VF's state and stats, costly to the PF
// driver); settings then go to its index. A stand-in PF (a veth end,
// which has no VFs) is renamed after the lookup: a setting still reaches
// it (the kernel answers that veth has no VF settings) instead of failing
// to find the PF by name. And a netlinkPF that keeps no index (raild's
// leak report reads admin MACs outside any session) works too.
func TestNetlinkPFLooksUpOnce(t *testing.T) {
	e := newTestEnv(t)
	pf := e.addNIC(1500, true)
	err := e.host.Do(func(ns.NetNS) error {
		nl, err := netlinksafe.NewHandle(unix.NETLINK_ROUTE)
		if err != nil {
			return err
		}
		defer nl.Close()
		if macs, err := NewHostVFsAt("/").AdminMACs(pf); err != nil || len(macs) != 0 {
			t.Errorf("AdminMACs(%s) = %v, %v; want no VFs, no error", pf, macs, err)
		}
		p := netlinkPF{h: nl, index: map[string]int{}}
		if _, err := p.VFState(pf, 0); !errors.Is(err, vfpf.ErrNotOnPF) {
			t.Errorf("vfpf.State of a veth: %v, want vfpf.ErrNotOnPF", err)
		}
		link, err := nl.LinkByName(pf)
		if err != nil {
			return err
		}
		if err := nl.LinkSetDown(link); err != nil {
			return err
		}
		if err := nl.LinkSetName(link, pf+"x"); err != nil {
			return err
		}
		if err := p.SetVFSpoofchk(pf, 0, true); !errors.Is(err, unix.EOPNOTSUPP) {
			t.Errorf("a setting after the PF was renamed: %v, want the kernel's EOPNOTSUPP from the PF's index", err)
		}
		if err := (netlinkPF{h: nl}).SetVFSpoofchk(pf, 0, true); err == nil || errors.Is(err, unix.EOPNOTSUPP) {
			t.Errorf("without a session's index: %v, want the PF not found by name", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
