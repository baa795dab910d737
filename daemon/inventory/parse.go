package inventory

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/daemon/linkfilter"
)

// eachLinkEvent parses the RTM_NEWLINK and RTM_DELLINK messages of one
// datagram for what a LinkEvent has and hands each on; anything else, or
// anything malformed, is skipped. It reads the header and the attributes
// in place (netlink's host byte order), allocating only the strings.
func eachLinkEvent(b []byte, handle func(LinkEvent)) {
	for len(b) >= unix.NLMSG_HDRLEN {
		length := int(binary.NativeEndian.Uint32(b[0:4]))
		typ := binary.NativeEndian.Uint16(b[4:6])
		if length < unix.NLMSG_HDRLEN || length > len(b) {
			return
		}
		if typ == unix.RTM_NEWLINK || typ == unix.RTM_DELLINK {
			if ev, ok := parseLink(b[unix.NLMSG_HDRLEN:length], typ == unix.RTM_DELLINK); ok {
				handle(ev)
			}
		}
		next := nlmsgAlign(length)
		if next > len(b) {
			return
		}
		b = b[next:]
	}
}

// parseLink reads one ifinfomsg and its attributes.
func parseLink(b []byte, gone bool) (LinkEvent, bool) {
	if len(b) < unix.SizeofIfInfomsg {
		return LinkEvent{}, false
	}
	ev := LinkEvent{
		Index: int(int32(binary.NativeEndian.Uint32(b[4:8]))),
		Gone:  gone,
		New:   !gone && binary.NativeEndian.Uint32(b[12:16]) == linkfilter.NewLink,
	}
	ev.State.Flags = binary.NativeEndian.Uint32(b[8:12]) & linkfilter.FollowedFlags
	parent, otherNetns := 0, false
	attrs := b[unix.SizeofIfInfomsg:]
	for len(attrs) >= unix.SizeofRtAttr {
		alen := int(binary.NativeEndian.Uint16(attrs[0:2]))
		atype := binary.NativeEndian.Uint16(attrs[2:4]) & nlaTypeMask
		if alen < unix.SizeofRtAttr || alen > len(attrs) {
			break
		}
		v := attrs[unix.SizeofRtAttr:alen]
		switch atype {
		case unix.IFLA_IFNAME:
			ev.Name = cString(v)
		case unix.IFLA_MTU:
			ev.State.MTU = int(u32(v))
		case unix.IFLA_LINK:
			parent = int(u32(v))
		case unix.IFLA_MASTER:
			ev.State.Master = int(u32(v))
		case unix.IFLA_OPERSTATE:
			if len(v) > 0 {
				ev.State.OperState = v[0]
			}
		case unix.IFLA_ADDRESS:
			ev.State.MAC = string(v)
		case unix.IFLA_IFALIAS:
			ev.State.Alias = cString(v)
		case unix.IFLA_LINK_NETNSID:
			otherNetns = true
		case unix.IFLA_NEW_NETNSID:
			ev.Moved = gone // sent only when the link moves to another netns
		}
		next := rtaAlign(alen)
		if next > len(attrs) {
			break
		}
		attrs = attrs[next:]
	}
	if !otherNetns && parent != ev.Index {
		ev.Lower = parent // a parent in another netns (a veth's peer) is no lower of this one's
	}
	return ev, true
}

func u32(v []byte) uint32 {
	if len(v) < 4 {
		return 0
	}
	return binary.NativeEndian.Uint32(v)
}

// cString is a NUL-terminated attribute as a string.
func cString(v []byte) string {
	if i := bytes.IndexByte(v, 0); i >= 0 {
		v = v[:i]
	}
	return string(v)
}

func nlmsgAlign(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }
func rtaAlign(n int) int   { return (n + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1) }

// nlaTypeMask strips an attribute type's nested and byte-order flags.
const nlaTypeMask = 0x3fff
