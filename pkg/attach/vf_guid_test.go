package attach

import (
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// TestParseVFGUIDs decodes IFLA_VFINFO_LIST as the kernel writes it:
// struct ifla_vf_guid in host byte order, one node and one port GUID per
// VF that reports them, other attributes beside them.
func TestParseVFGUIDs(t *testing.T) {
	list := nl.NewRtAttr(unix.IFLA_VFINFO_LIST, nil)
	for vf, g := range map[uint32][2]uint64{0: {0x0011223344556677, 0x8899aabbccddeeff}, 3: {0, 0}} {
		info := list.AddRtAttr(nl.IFLA_VF_INFO, nil)
		info.AddRtAttr(nl.IFLA_VF_SPOOFCHK, (&nl.VfSpoofchk{Vf: vf}).Serialize())
		info.AddRtAttr(nl.IFLA_VF_IB_NODE_GUID, (&nl.VfGUID{Vf: vf, GUID: g[0]}).Serialize())
		info.AddRtAttr(nl.IFLA_VF_IB_PORT_GUID, (&nl.VfGUID{Vf: vf, GUID: g[1]}).Serialize())
	}
	list.AddRtAttr(nl.IFLA_VF_INFO, nil).AddRtAttr(nl.IFLA_VF_TRUST, (&nl.VfTrust{Vf: 5}).Serialize()) // reports none
	attrs, err := nl.ParseRouteAttr(append(nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(4092)).Serialize(), list.Serialize()...))
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseVFGUIDs(attrs)
	if err != nil {
		t.Fatalf("parseVFGUIDs: %v", err)
	}
	want := map[int][2]string{0: {"00:11:22:33:44:55:66:77", "88:99:aa:bb:cc:dd:ee:ff"}, 3: {"00:00:00:00:00:00:00:00", "00:00:00:00:00:00:00:00"}}
	if len(got) != len(want) {
		t.Fatalf("got %d VFs %+v, want %d", len(got), got, len(want))
	}
	for vf, w := range want {
		if got[vf].Node.String() != w[0] || got[vf].Port.String() != w[1] {
			t.Errorf("VF %d: node %s port %s, want %s %s", vf, got[vf].Node, got[vf].Port, w[0], w[1])
		}
	}
}
