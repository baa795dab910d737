package vfnetdev

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/vfpf"
)

// An InfiniBand VF has a node GUID and a port GUID, set through its PF
// (IFLA_VF_IB_NODE_GUID / IFLA_VF_IB_PORT_GUID) and taken by the VF only
// when its driver binds again. vf mode sets both to one GUID (the
// runtime's infinibandGUID, else the lease's), as ib-sriov-cni does.

// GUIDs are an InfiniBand VF's node and port GUID before the GUID step,
// which its inverse restores.
type GUIDs struct {
	NodeGUID net.HardwareAddr
	PortGUID net.HardwareAddr
}

// ipoibAddrLen is the length of an IPoIB hardware address: 4 bytes of
// flags and QPN, then the port GID (8 bytes of subnet prefix, 8 of port
// GUID).
const ipoibAddrLen = 20

// guidOfIPoIBAddr is the port GUID in an IPoIB netdev's hardware address;
// nil for any other address (an Ethernet netdev has none).
func guidOfIPoIBAddr(addr net.HardwareAddr) net.HardwareAddr {
	if len(addr) != ipoibAddrLen {
		return nil
	}
	return append(net.HardwareAddr(nil), addr[12:]...)
}

// guidsBefore is what the GUID step records of an InfiniBand VF's GUIDs
// before it sets them: what the PF reports, else the port GUID in the VF
// netdev's address for both (what the VF uses now), else nothing.
func guidsBefore(st vfpf.State, netdevAddr net.HardwareAddr) (GUIDs, error) {
	if st.NodeGUID != nil && st.PortGUID != nil {
		return GUIDs{NodeGUID: st.NodeGUID, PortGUID: st.PortGUID}, nil
	}
	if g := guidOfIPoIBAddr(netdevAddr); g != nil {
		return GUIDs{NodeGUID: g, PortGUID: g}, nil
	}
	return GUIDs{}, fmt.Errorf("neither the PF reports the VF's GUIDs nor is its netdev's address an IPoIB one (%d bytes): "+
		"the GUIDs could not be restored, so none is set (is the PF's port InfiniBand?)", len(netdevAddr))
}

// guidToRestore is the GUID a reset sets for a recorded one: a VF whose
// GUID was zero (mlx5 VFs start so) gets all ones, which mlx5 takes as
// "no administrative GUID" (the kernel refuses zero), as ib-sriov-cni does.
func guidToRestore(g net.HardwareAddr) net.HardwareAddr {
	if vfpf.IsZeroMAC(g) {
		return net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	return g
}

// GUIDStep sets an InfiniBand VF's node and port GUID to guid through its
// PF and rebinds its driver so that it takes them; Do returns the VF's new
// netdev, given the name, MTU and state link (its netdev now) has. It
// returns the GUIDs from before, which the inverse sets again, with a
// rebind; an error when they cannot be known (nothing is set then).
func (n Node) GUIDStep(vf vfpf.VF, link netlink.Link, guid net.HardwareAddr, before vfpf.State) (Step, GUIDs, error) {
	what := fmt.Sprintf("guid of VF %d of PF %s", vf.Index, vf.PF)
	was, err := guidsBefore(before, link.Attrs().HardwareAddr)
	if err != nil {
		return Step{}, GUIDs{}, fmt.Errorf("set %s: %w", what, err)
	}
	want := StateOf(link)
	restorePF := func() error {
		return n.PF.SetVFGUID(vf.PF, vf.Index, guidToRestore(was.NodeGUID), guidToRestore(was.PortGUID))
	}
	do := func() (netlink.Link, error) {
		if err := n.PF.SetVFGUID(vf.PF, vf.Index, guid, guid); err != nil {
			err = fmt.Errorf("set %s through the PF: %w", what, err)
			// Not rebound: the VF still runs with its old GUIDs; the PF's
			// record of them is put back for its next bind.
			return nil, errors.Join(err, restorePF())
		}
		rebound, err := n.RebindVF(vf, want)
		if err != nil {
			err = fmt.Errorf("rebind VF %d of PF %s to take %s: %w", vf.Index, vf.PF, what, err)
			if rerr := restorePF(); rerr != nil {
				return nil, errors.Join(err, rerr)
			}
			_, rerr := n.RebindVF(vf, want)
			return nil, errors.Join(err, rerr)
		}
		return rebound, nil
	}
	undo := func() error {
		if err := restorePF(); err != nil {
			return err
		}
		_, err := n.RebindVF(vf, want)
		return err
	}
	return Step{Setting: "guid", Do: do, Undo: undo}, was, nil
}

// RestoreGUIDs sets the GUIDs was holds back through the PF and rebinds
// the VF, whose new netdev gets the host name, MTU and state want says. A
// PF or VF that is gone needs nothing.
func (n Node) RestoreGUIDs(vf vfpf.VF, was GUIDs, want HostState) error {
	if err := n.PF.SetVFGUID(vf.PF, vf.Index, guidToRestore(was.NodeGUID), guidToRestore(was.PortGUID)); err != nil {
		if vfpf.Gone(n.PF, vf, err) {
			return nil
		}
		return fmt.Errorf("reset guid of VF %d of PF %s: %w", vf.Index, vf.PF, err)
	}
	if _, err := n.RebindVF(vf, want); err != nil {
		return fmt.Errorf("rebind VF %d of PF %s to take its old GUIDs: %w", vf.Index, vf.PF, err)
	}
	return nil
}
