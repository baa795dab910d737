package attach

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/vfpf"
)

// An InfiniBand VF has a node GUID and a port GUID, set through its PF
// (IFLA_VF_IB_NODE_GUID / IFLA_VF_IB_PORT_GUID) and taken by the VF only
// when its driver binds again. vf mode sets both to one GUID (the
// runtime's infinibandGUID, else the lease's), as ib-sriov-cni does.

// vfGUIDs is what the PF reports of one VF's GUIDs.
type vfGUIDs struct{ Node, Port net.HardwareAddr }

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

// readVFGUIDs asks the kernel, in the calling thread's netns, for the VF
// GUIDs the PF with ifindex index reports (vishvananda/netlink does not
// parse them), by VF number.
func readVFGUIDs(index int) (map[int]vfGUIDs, error) {
	sock, err := openRouteSocket(netns.None())
	if err != nil {
		return nil, err
	}
	defer sock.close()
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFLA_EXT_MASK, nl.Uint32Attr(nl.RTEXT_FILTER_VF)))
	answers, err := sock.execute(req, unix.RTM_NEWLINK)
	if err != nil {
		return nil, err
	}
	if len(answers) != 1 || len(answers[0]) < unix.SizeofIfInfomsg {
		return nil, fmt.Errorf("link %d: %d answers to RTM_GETLINK", index, len(answers))
	}
	attrs, err := nl.ParseRouteAttr(answers[0][unix.SizeofIfInfomsg:])
	if err != nil {
		return nil, fmt.Errorf("link %d: %w", index, err)
	}
	return parseVFGUIDs(attrs)
}

// parseVFGUIDs reads IFLA_VFINFO_LIST's GUID attributes: struct
// ifla_vf_guid { __u32 vf; __u64 guid; } in host byte order, the GUID's
// bytes being the big-endian form of that number.
func parseVFGUIDs(attrs []syscall.NetlinkRouteAttr) (map[int]vfGUIDs, error) {
	out := map[int]vfGUIDs{}
	for _, list := range attrs {
		if list.Attr.Type != unix.IFLA_VFINFO_LIST {
			continue
		}
		infos, err := nl.ParseRouteAttr(list.Value)
		if err != nil {
			return nil, fmt.Errorf("IFLA_VFINFO_LIST: %w", err)
		}
		for _, info := range infos {
			fields, err := nl.ParseRouteAttr(info.Value)
			if err != nil {
				return nil, fmt.Errorf("IFLA_VF_INFO: %w", err)
			}
			for _, f := range fields {
				if f.Attr.Type != nl.IFLA_VF_IB_NODE_GUID && f.Attr.Type != nl.IFLA_VF_IB_PORT_GUID {
					continue
				}
				if len(f.Value) < nl.SizeofVfGUID {
					return nil, fmt.Errorf("VF GUID attribute of %d bytes, want %d", len(f.Value), nl.SizeofVfGUID)
				}
				vf := int(nl.NativeEndian().Uint32(f.Value[0:4]))
				guid := make(net.HardwareAddr, 8)
				binary.BigEndian.PutUint64(guid, nl.NativeEndian().Uint64(f.Value[8:16]))
				g := out[vf]
				if f.Attr.Type == nl.IFLA_VF_IB_NODE_GUID {
					g.Node = guid
				} else {
					g.Port = guid
				}
				out[vf] = g
			}
		}
	}
	return out, nil
}

// guidsBefore is what attach records of an InfiniBand VF's GUIDs before
// it sets them: what the PF reports, else the port GUID in the VF
// netdev's address for both (what the VF uses now), else nothing.
func guidsBefore(st vfpf.State, netdevAddr net.HardwareAddr) (node, port net.HardwareAddr, err error) {
	if st.NodeGUID != nil && st.PortGUID != nil {
		return st.NodeGUID, st.PortGUID, nil
	}
	if g := guidOfIPoIBAddr(netdevAddr); g != nil {
		return g, g, nil
	}
	return nil, nil, fmt.Errorf("neither the PF reports the VF's GUIDs nor is its netdev's address an IPoIB one (%d bytes): "+
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

// setVFGUIDs sets an InfiniBand VF's node and port GUID through its PF and
// rebinds its driver so that it takes them; the VF's new netdev, returned,
// gets the name, MTU and state of hostLink. rec gets the GUIDs from before; the
// inverse (pushed on undo) sets those again and rebinds.
func (a attacher) setVFGUIDs(sess *session, hostLink netlink.Link, s Spec, before vfpf.State, rec *vfRecord, undo *undoList) (netlink.Link, error) {
	pf, v := a.pfControl(sess), s.VF
	what := fmt.Sprintf("guid of VF %d of PF %s", v.Index, v.PF)
	node, port, err := guidsBefore(before, hostLink.Attrs().HardwareAddr)
	if err != nil {
		return nil, fmt.Errorf("set %s: %w", what, err)
	}
	attrs := hostLink.Attrs()
	want := hostState{Name: attrs.Name, MTU: attrs.MTU, Up: attrs.Flags&net.FlagUp != 0}
	restorePF := func() error {
		return pf.SetVFGUID(v.PF, v.Index, guidToRestore(node), guidToRestore(port))
	}
	if err := pf.SetVFGUID(v.PF, v.Index, v.GUID, v.GUID); err != nil {
		err = fmt.Errorf("set %s through the PF: %w", what, err)
		// Not rebound: the VF still runs with its old GUIDs; the PF's
		// record of them is put back for its next bind.
		return nil, errors.Join(err, restorePF())
	}
	link, err := a.rebindVF(sess, v.PF, v.Index, want)
	if err != nil {
		err = fmt.Errorf("rebind VF %d of PF %s to take %s: %w", v.Index, v.PF, what, err)
		if rerr := restorePF(); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		_, rerr := a.rebindVF(sess, v.PF, v.Index, want)
		return nil, errors.Join(err, rerr)
	}
	rec.NodeGUID, rec.PortGUID = node, port
	undo.push(what, func() error {
		if err := restorePF(); err != nil {
			return err
		}
		_, err := a.rebindVF(sess, v.PF, v.Index, want)
		return err
	})
	return link, nil
}

// restoreVFGUIDs sets the GUIDs rec recorded back through the PF and
// rebinds the VF, whose new netdev (without rail's label) gets the host
// name, MTU and state want says. A PF or VF that is gone needs nothing.
func (a attacher) restoreVFGUIDs(sess *session, rec *vfRecord, want hostState) error {
	pf := a.pfControl(sess)
	if err := pf.SetVFGUID(rec.PF, rec.Index, guidToRestore(rec.NodeGUID), guidToRestore(rec.PortGUID)); err != nil {
		if vfpf.Gone(pf, rec.place(), err) {
			return nil
		}
		return fmt.Errorf("reset guid of VF %d of PF %s: %w", rec.Index, rec.PF, err)
	}
	if _, err := a.rebindVF(sess, rec.PF, rec.Index, want); err != nil {
		return fmt.Errorf("rebind VF %d of PF %s to take its old GUIDs: %w", rec.Index, rec.PF, err)
	}
	return nil
}
