package inventory

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/daemon/linkfilter"
	"github.com/railcni/rail/daemon/linkfilter/linkfiltertest"
)

// linkState is a link message's fields the state comparisons read, laid
// out as the kernel does (attributes it leaves out when empty: master,
// alias, address).
type linkState struct {
	flags, change uint32
	name          string
	mtu, master   uint32
	oper          uint8
	mac           []byte
	alias         string
	qlen          uint32 // IFLA_TXQLEN: not followed
}

func (s linkState) bytes(index int32) []byte {
	attrs := [][]byte{linkfiltertest.Attr(unix.IFLA_IFNAME, append([]byte(s.name), 0)), linkfiltertest.Attr(unix.IFLA_TXQLEN, linkfiltertest.LE32(s.qlen)),
		linkfiltertest.Attr(unix.IFLA_OPERSTATE, []byte{s.oper}), linkfiltertest.Attr(unix.IFLA_MTU, linkfiltertest.LE32(s.mtu))}
	if s.master != 0 {
		attrs = append(attrs, linkfiltertest.Attr(unix.IFLA_MASTER, linkfiltertest.LE32(s.master)))
	}
	if len(s.mac) > 0 {
		attrs = append(attrs, linkfiltertest.Attr(unix.IFLA_ADDRESS, s.mac))
	}
	if s.alias != "" {
		attrs = append(attrs, linkfiltertest.Attr(unix.IFLA_IFALIAS, append([]byte(s.alias), 0)))
	}
	b := linkfiltertest.Message(unix.RTM_NEWLINK, index, attrs...)
	binary.NativeEndian.PutUint32(b[linkfiltertest.OffFlags:], s.flags)
	binary.NativeEndian.PutUint32(b[linkfiltertest.OffChange:], s.change)
	return b
}

// TestLinkFilterStates: an RTM_NEWLINK of a watched link whose state the
// filter holds passes exactly when parseLink reads a different name or
// linkfilter.State from it than that state: the program and the parser agree on
// every field, on Ethernet and InfiniBand addresses, with and without a
// master and an alias.
func TestLinkFilterStates(t *testing.T) {
	const nic, other = 7, 9
	up := uint32(unix.IFF_UP | unix.IFF_RUNNING | unix.IFF_LOWER_UP | unix.IFF_BROADCAST | unix.IFF_MULTICAST)
	eth := linkState{flags: up, name: "ens1f0np0", mtu: 1500, oper: 6, mac: []byte{2, 0, 0, 0, 0, 1}, qlen: 1000}
	ib := linkState{flags: up, name: "ibp59s0", mtu: 4092, oper: 6, master: 12, alias: "rail nic", qlen: 256,
		mac: []byte{0, 0, 16, 0x49, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x0c, 0x42, 0xa1, 0x03, 0, 0x6b, 0x2e, 0x5c}}
	with := func(s linkState, change func(*linkState)) linkState { change(&s); return s }
	for _, base := range []struct {
		name  string
		state linkState
	}{{"ethernet", eth}, {"infiniband, master, alias", ib}} {
		seen, ok := parseLink(base.state.bytes(nic)[unix.NLMSG_HDRLEN:], false)
		if !ok {
			t.Fatal("the base state does not parse")
		}
		prog, err := linkfilter.Program(linkfilter.List{Indexes: []int{nic, other}, Parents: true,
			States: map[int]linkfilter.Seen{nic: {Name: seen.Name, State: seen.State}}})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			msg  linkState
		}{
			{"as it was (an upper device added)", base.state},
			{"promiscuous", with(base.state, func(s *linkState) { s.flags |= unix.IFF_PROMISC; s.change = unix.IFF_PROMISC })},
			{"all-multicast", with(base.state, func(s *linkState) { s.flags |= unix.IFF_ALLMULTI })},
			{"queue length", with(base.state, func(s *linkState) { s.qlen = 2000 })},
			{"down", with(base.state, func(s *linkState) { s.flags &^= unix.IFF_UP; s.change = unix.IFF_UP })},
			{"no carrier", with(base.state, func(s *linkState) { s.flags &^= unix.IFF_LOWER_UP | unix.IFF_RUNNING })},
			{"dormant", with(base.state, func(s *linkState) { s.flags |= unix.IFF_DORMANT })},
			{"operstate", with(base.state, func(s *linkState) { s.oper = 2 })},
			{"MTU", with(base.state, func(s *linkState) { s.mtu = 9000 })},
			{"MTU high byte", with(base.state, func(s *linkState) { s.mtu += 1 << 24 })},
			{"master", with(base.state, func(s *linkState) { s.master = 33 })},
			{"no master", with(base.state, func(s *linkState) { s.master = 0 })},
			{"address", with(base.state, func(s *linkState) { s.mac = append([]byte(nil), s.mac...); s.mac[len(s.mac)-1]++ })},
			{"address first byte", with(base.state, func(s *linkState) { s.mac = append([]byte(nil), s.mac...); s.mac[0]++ })},
			{"no address", with(base.state, func(s *linkState) { s.mac = nil })},
			{"a longer address", with(base.state, func(s *linkState) { s.mac = append(append([]byte(nil), s.mac...), 0) })},
			{"renamed", with(base.state, func(s *linkState) { s.name = "rail0" })},
			{"renamed, one letter", with(base.state, func(s *linkState) { s.name = s.name[:len(s.name)-1] + "x" })},
			{"an alias", with(base.state, func(s *linkState) { s.alias = "other" })},
			{"no alias", with(base.state, func(s *linkState) { s.alias = "" })},
		}
		for _, tt := range tests {
			t.Run(base.name+"/"+tt.name, func(t *testing.T) {
				msg := tt.msg.bytes(nic)
				ev, _ := parseLink(msg[unix.NLMSG_HDRLEN:], false)
				want := ev.Name != seen.Name || ev.State != seen.State
				if got := linkfiltertest.Run(t, prog, msg) != 0; got != want {
					t.Errorf("passed %v, want %v (parsed %+v, held %+v)", got, want, ev.State, seen.State)
				}
				if linkfiltertest.Run(t, prog, tt.msg.bytes(other)) == 0 {
					t.Error("a watched link without a state held was dropped")
				}
				del := tt.msg.bytes(nic)
				binary.NativeEndian.PutUint16(del[linkfiltertest.OffType:], unix.RTM_DELLINK)
				if linkfiltertest.Run(t, prog, del) == 0 {
					t.Error("its departure was dropped")
				}
			})
		}
	}
}

// TestLinkFilterStatesFallBack: states too many for the program leave
// the filter without them (every event of a watched link passes), not
// without a filter.
func TestLinkFilterStatesFallBack(t *testing.T) {
	states := map[int]linkfilter.Seen{}
	var indexes []int
	for i := 1; i <= 60; i++ {
		indexes = append(indexes, i)
		states[i] = linkfilter.Seen{Name: "ens1f0np0", State: linkfilter.State{MTU: 1500, MAC: "\x02\x00\x00\x00\x00\x01", Alias: "a long alias, as operators write them"}}
	}
	prog, err := linkfilter.Program(linkfilter.List{Indexes: indexes, Parents: true, States: states})
	if err != nil {
		t.Fatal(err)
	}
	msg := linkState{name: "ens1f0np0", mtu: 1500, mac: []byte{2, 0, 0, 0, 0, 1}, alias: "a long alias, as operators write them"}.bytes(30)
	if linkfiltertest.Run(t, prog, msg) == 0 {
		t.Error("an unchanged event was dropped by a program that could not hold the states")
	}
}
