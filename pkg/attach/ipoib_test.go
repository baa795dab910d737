package attach

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

func TestIPoIBRefusedOnEthernetParent(t *testing.T) {
	e := newTestEnv(t)
	nic := e.addNIC(1500, true)
	hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
	_, err := e.attach(Spec{Mode: ModeIPoIB, Parent: nic, Name: "ib1", PKey: 0x8001, Addresses: prefixes("10.10.0.5/24")})
	want := fmt.Sprintf(`ipoib mode needs an InfiniBand parent: %s is Ethernet (type 1); use mode "macvlan" for RoCE`, nic)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Attach = %v, want an error containing %q", err, want)
	}
	assertSame(t, "host netns", e.host, hostBefore)
	assertSame(t, "pod netns", e.pod, podBefore)
}

func TestRequireInfinibandParent(t *testing.T) {
	tests := []struct {
		hwType  uint16
		wantErr string
	}{
		{arphrdInfiniband, ""},
		{arphrdEther, "ib0x is Ethernet (type 1)"},
		{772, "ib0x is link type 772 (type 772)"},
	}
	for _, tt := range tests {
		err := requireInfinibandParent("ib0x", tt.hwType)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("type %d: %v, want nil", tt.hwType, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("type %d: %v, want an error containing %q", tt.hwType, err, tt.wantErr)
		}
	}
}

// decodedRequest is a serialized RTM_NEWLINK taken apart again.
type decodedRequest struct {
	msgType, flags uint16
	ifIndex        int32
	attrs          map[uint16][]byte
}

func decodeLinkRequest(t *testing.T, req *nl.NetlinkRequest) decodedRequest {
	t.Helper()
	b := req.Serialize()
	if int(binary.NativeEndian.Uint32(b)) != len(b) {
		t.Fatalf("header length %d, message %d bytes", binary.NativeEndian.Uint32(b), len(b))
	}
	body := b[unix.SizeofNlMsghdr:]
	d := decodedRequest{
		msgType: binary.NativeEndian.Uint16(b[4:]),
		flags:   binary.NativeEndian.Uint16(b[6:]),
		ifIndex: nl.DeserializeIfInfomsg(body).Index,
		attrs:   parseAttrs(t, body[unix.SizeofIfInfomsg:]),
	}
	return d
}

func parseAttrs(t *testing.T, b []byte) map[uint16][]byte {
	t.Helper()
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		t.Fatalf("parse attributes: %v", err)
	}
	out := map[uint16][]byte{}
	for _, a := range attrs {
		if _, dup := out[a.Attr.Type]; dup {
			t.Fatalf("attribute %d appears twice", a.Attr.Type)
		}
		out[a.Attr.Type] = a.Value
	}
	return out
}

func TestIPoIBRequestEncoding(t *testing.T) {
	tests := []struct {
		name     string
		child    ipoibChild
		wantPKey *uint16 // nil: attribute absent (parent's P_Key)
		wantMode uint16
	}{
		{"parent pkey, datagram", ipoibChild{ParentIndex: 7, Name: "ib1", NetnsFd: 11}, nil, 0},
		{"pkey 0x8001, connected, mtu", ipoibChild{ParentIndex: 9, Name: "net1", NetnsFd: 12, PKey: 0x8001,
			Mode: netlink.IPOIB_MODE_CONNECTED, MTU: 4092}, ptr(uint16(0x8001)), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decodeLinkRequest(t, tt.child.request())
			wantFlags := uint16(unix.NLM_F_REQUEST | unix.NLM_F_ACK | unix.NLM_F_CREATE | unix.NLM_F_EXCL)
			if d.msgType != unix.RTM_NEWLINK || d.flags != wantFlags || d.ifIndex != 0 {
				t.Errorf("header type %d flags %#x index %d, want RTM_NEWLINK %#x 0", d.msgType, d.flags, d.ifIndex, wantFlags)
			}
			wantU32(t, d.attrs, unix.IFLA_LINK, uint32(tt.child.ParentIndex))
			wantU32(t, d.attrs, unix.IFLA_NET_NS_FD, uint32(tt.child.NetnsFd))
			wantString(t, d.attrs, unix.IFLA_IFNAME, tt.child.Name+"\x00")
			if tt.child.MTU > 0 {
				wantU32(t, d.attrs, unix.IFLA_MTU, uint32(tt.child.MTU))
			} else if _, ok := d.attrs[unix.IFLA_MTU]; ok {
				t.Errorf("IFLA_MTU sent for MTU 0")
			}
			info := parseAttrs(t, d.attrs[unix.IFLA_LINKINFO])
			wantString(t, info, nl.IFLA_INFO_KIND, "ipoib")
			data := parseAttrs(t, info[nl.IFLA_INFO_DATA])
			if pkey, ok := data[nl.IFLA_IPOIB_PKEY]; tt.wantPKey == nil && ok {
				t.Errorf("IFLA_IPOIB_PKEY sent (%x) for the parent's P_Key", pkey)
			} else if tt.wantPKey != nil && (!ok || binary.NativeEndian.Uint16(pkey) != *tt.wantPKey) {
				t.Errorf("IFLA_IPOIB_PKEY = %x, want %#04x", pkey, *tt.wantPKey)
			}
			if mode := data[nl.IFLA_IPOIB_MODE]; len(mode) != 2 || binary.NativeEndian.Uint16(mode) != tt.wantMode {
				t.Errorf("IFLA_IPOIB_MODE = %x, want %d", mode, tt.wantMode)
			}
		})
	}
}

func TestLinkChangeEncoding(t *testing.T) {
	tests := []struct {
		name   string
		change linkChange
		want   map[uint16]string // attribute -> value as string; "" = empty attribute
	}{
		{"move into the pod: one message", linkChange{Index: 5, NetnsFd: 9, Name: "rail0", Alias: ptr("rail:nic0:name=rail0:mtu=1500:up=1"), MTU: 9000},
			map[uint16]string{unix.IFLA_NET_NS_FD: u32(9), unix.IFLA_IFNAME: "rail0\x00",
				unix.IFLA_IFALIAS: "rail:nic0:name=rail0:mtu=1500:up=1", unix.IFLA_MTU: u32(9000)}},
		{"move back: alias cleared", linkChange{Index: 3, NetnsFd: 4, Name: "nic0", Alias: ptr(""), MTU: 1500},
			map[uint16]string{unix.IFLA_NET_NS_FD: u32(4), unix.IFLA_IFNAME: "nic0\x00", unix.IFLA_IFALIAS: "", unix.IFLA_MTU: u32(1500)}},
		{"restore in place keeps name and alias", linkChange{Index: 3, NetnsFd: -1, MTU: 1500},
			map[uint16]string{unix.IFLA_MTU: u32(1500)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decodeLinkRequest(t, tt.change.request())
			if d.msgType != unix.RTM_NEWLINK || d.ifIndex != int32(tt.change.Index) || d.flags&unix.NLM_F_CREATE != 0 {
				t.Errorf("header type %d index %d flags %#x", d.msgType, d.ifIndex, d.flags)
			}
			if len(d.attrs) != len(tt.want) {
				t.Errorf("%d attributes, want %d", len(d.attrs), len(tt.want))
			}
			for typ, want := range tt.want {
				wantString(t, d.attrs, typ, want)
			}
		})
	}
}

func wantU32(t *testing.T, attrs map[uint16][]byte, typ uint16, want uint32) {
	t.Helper()
	v, ok := attrs[typ]
	if !ok || len(v) != 4 || binary.NativeEndian.Uint32(v) != want {
		t.Errorf("attribute %d = %x (present %v), want %d", typ, v, ok, want)
	}
}

func wantString(t *testing.T, attrs map[uint16][]byte, typ uint16, want string) {
	t.Helper()
	v, ok := attrs[typ]
	if !ok || string(v) != want {
		t.Errorf("attribute %d = %q (present %v), want %q", typ, v, ok, want)
	}
}

func u32(v uint32) string {
	b := make([]byte, 4)
	binary.NativeEndian.PutUint32(b, v)
	return string(b)
}

func ptr[T any](v T) *T { return &v }
