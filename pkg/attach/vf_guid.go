package attach

import (
	"encoding/binary"
	"fmt"
	"net"
	"syscall"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The GUIDs a PF reports of its InfiniBand VFs, for netlinkPF.VFState:
// vishvananda/netlink does not parse them. Setting them is
// vfnetdev.GUIDStep's.

// vfGUIDs is what the PF reports of one VF's GUIDs.
type vfGUIDs struct{ Node, Port net.HardwareAddr }

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
