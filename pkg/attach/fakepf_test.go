package attach

import (
	"fmt"
	"net"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/vfpf"
)

// fakePF stands in for a PF's driver: it keeps each VF's admin state,
// records every call, refuses what igb refuses (link state: EOPNOTSUPP,
// a non-zero min_tx_rate: EINVAL) and can be told to fail its n-th
// setting call.
type fakePF struct {
	mu     sync.Mutex
	name   string
	vfs    map[int]vfpf.State
	calls  []string
	failAt int // fail the failAt-th Set call (1-based); 0 never
	sets   int
	reads  int // vfpf.State calls
	// failFrom fails every Set call from this one on (0: never), for a
	// reset that cannot be done.
	failFrom int
	// pfSet is igb's IGB_VF_FLAG_PF_SET_MAC per VF: set by a non-zero
	// admin MAC, cleared by a zero one; while it is set an untrusted VF
	// may not change its own MAC (igbVFSetMAC).
	pfSet map[int]bool
	// ib makes it an InfiniBand PF (mlx5 on an IB port): VFs start with
	// zero GUIDs, SetVFGUID works; an Ethernet one refuses GUIDs.
	ib bool
}

// infiniband makes f an InfiniBand PF whose VFs have zero GUIDs, as mlx5
// creates them.
func (f *fakePF) infiniband() *fakePF {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ib = true
	for i, st := range f.vfs {
		st.NodeGUID, st.PortGUID = make(net.HardwareAddr, 8), make(net.HardwareAddr, 8)
		f.vfs[i] = st
	}
	return f
}

// SetVFGUID models mlx5: all ones clears the VF's administrative GUID
// (it reads back zero); an Ethernet PF has no ndo_set_vf_guid.
func (f *fakePF) SetVFGUID(pf string, vf int, node, port net.HardwareAddr) error {
	return f.set(pf, vf, fmt.Sprintf("guid %s %s", node, port), func(s *vfpf.State) error {
		if !f.ib {
			return unix.EOPNOTSUPP
		}
		take := func(g net.HardwareAddr) net.HardwareAddr {
			if isAllOnesGUID(g) {
				return make(net.HardwareAddr, 8)
			}
			return append(net.HardwareAddr(nil), g...)
		}
		s.NodeGUID, s.PortGUID = take(node), take(port)
		return nil
	})
}

func isAllOnesGUID(g net.HardwareAddr) bool {
	for _, b := range g {
		if b != 0xff {
			return false
		}
	}
	return len(g) == 8
}

func newFakePF(name string, vfs int) *fakePF {
	f := &fakePF{name: name, vfs: map[int]vfpf.State{}}
	for i := range vfs {
		f.vfs[i] = vfpf.State{MAC: net.HardwareAddr{0x52, 0x35, 0xf7, 0x89, 0x82, byte(i)}, VLANProto: VLANProto8021Q, Spoofchk: true}
	}
	return f
}

func (f *fakePF) control(*session) vfpf.Control { return f }

func (f *fakePF) state(vf int) vfpf.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.vfs[vf]
}

func (f *fakePF) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakePF) VFState(pf string, vf int) (vfpf.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if pf != f.name {
		return vfpf.State{}, fmt.Errorf("link %s not found: %w", pf, unix.ENODEV)
	}
	st, ok := f.vfs[vf]
	if !ok {
		return vfpf.State{}, fmt.Errorf("VF %d: %w", vf, vfpf.ErrNotOnPF)
	}
	st.MAC = append(net.HardwareAddr(nil), st.MAC...)
	if st.NodeGUID != nil {
		st.NodeGUID, st.PortGUID = append(net.HardwareAddr(nil), st.NodeGUID...), append(net.HardwareAddr(nil), st.PortGUID...)
	}
	return st, nil
}

// set applies change to VF vf after the checks every Set call passes.
func (f *fakePF) set(pf string, vf int, call string, change func(*vfpf.State) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	f.sets++
	if pf != f.name {
		return fmt.Errorf("link %s not found: %w", pf, unix.ENODEV)
	}
	st, ok := f.vfs[vf]
	if !ok {
		return unix.EINVAL
	}
	if f.sets == f.failAt || (f.failFrom > 0 && f.sets >= f.failFrom) {
		return fmt.Errorf("injected failure of %s: %w", call, unix.EIO)
	}
	if err := change(&st); err != nil {
		return err
	}
	f.vfs[vf] = st
	return nil
}

func (f *fakePF) SetVFMAC(pf string, vf int, mac net.HardwareAddr) error {
	return f.set(pf, vf, "mac "+mac.String(), func(s *vfpf.State) error {
		s.MAC = append(net.HardwareAddr(nil), mac...)
		if f.pfSet == nil {
			f.pfSet = map[int]bool{}
		}
		f.pfSet[vf] = !vfpf.IsZeroMAC(mac)
		return nil
	})
}

// igbVFSetMAC models VF vf's driver setting its netdev's MAC through an
// igb PF: refused (EADDRNOTAVAIL) for an untrusted VF once the PF set a
// MAC; else the netdev takes it and the PF records it as the VF's MAC.
func (f *fakePF) igbVFSetMAC(vf int) func(netlink.Link, net.HardwareAddr) error {
	return func(link netlink.Link, mac net.HardwareAddr) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		st := f.vfs[vf]
		f.calls = append(f.calls, "vf sets "+mac.String())
		if f.pfSet[vf] && !st.Trust {
			return unix.EADDRNOTAVAIL
		}
		if err := netlink.LinkSetHardwareAddr(link, mac); err != nil {
			return err
		}
		st.MAC = append(net.HardwareAddr(nil), mac...)
		f.vfs[vf] = st
		return nil
	}
}

func (f *fakePF) SetVFVLAN(pf string, vf, vlan, qos int, proto uint16) error {
	return f.set(pf, vf, fmt.Sprintf("vlan %d qos %d proto %#x", vlan, qos, proto), func(s *vfpf.State) error {
		if vlan > 4095 || qos > 7 {
			return unix.EINVAL
		}
		s.VLAN, s.QoS, s.VLANProto = vlan, qos, proto
		return nil
	})
}

func (f *fakePF) SetVFSpoofchk(pf string, vf int, on bool) error {
	return f.set(pf, vf, fmt.Sprintf("spoofchk %v", on), func(s *vfpf.State) error { s.Spoofchk = on; return nil })
}

func (f *fakePF) SetVFTrust(pf string, vf int, on bool) error {
	return f.set(pf, vf, fmt.Sprintf("trust %v", on), func(s *vfpf.State) error { s.Trust = on; return nil })
}

func (f *fakePF) SetVFLinkState(pf string, vf int, state VFLinkState) error {
	return f.set(pf, vf, "state "+state.String(), func(*vfpf.State) error { return unix.EOPNOTSUPP })
}

func (f *fakePF) SetVFRate(pf string, vf int, minMbps, maxMbps uint32) error {
	return f.set(pf, vf, fmt.Sprintf("rate %d %d", minMbps, maxMbps), func(s *vfpf.State) error {
		if minMbps != 0 {
			return unix.EINVAL
		}
		s.MinTxRate, s.MaxTxRate = minMbps, maxMbps
		return nil
	})
}
