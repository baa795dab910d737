package inventory

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/daemon/linkfilter/linkfiltertest"
)

// TestLinkEventsFromTheKernel reads real events of a netns of the test's
// own and checks what each carries as the kernel sent it: the name and
// ifindex, a macvlan's lower link, the flags a NIC's record follows (not
// promiscuous mode), MTU, address, alias and removal.
func TestLinkEventsFromTheKernel(t *testing.T) {
	ns, h := namedNetns(t, fmt.Sprintf("ry-inv-%d-ev", os.Getpid()))
	src, err := LinkEvents(ns)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	events := make(chan LinkEvent, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.Run(ctx, func(ev LinkEvent) { events <- ev })
	}()
	t.Cleanup(func() { cancel(); <-done })

	base := fmt.Sprintf("ryev%d", os.Getpid()%100000)
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: base + "a"}, PeerName: base + "b"}
	must(t, h.LinkAdd(veth))
	a, err := h.LinkByName(veth.Name)
	must(t, err)
	mv := &netlink.Macvlan{LinkAttrs: netlink.LinkAttrs{Name: base + "m", ParentIndex: a.Attrs().Index}, Mode: netlink.MACVLAN_MODE_BRIDGE}
	must(t, h.LinkAdd(mv))
	m, err := h.LinkByName(mv.Name)
	must(t, err)
	mac, _ := net.ParseMAC("02:00:00:00:12:34")

	steps := []struct {
		name string
		do   func() error
		ok   func(LinkEvent) bool
	}{
		{"macvlan created, on the veth", func() error { return nil }, func(ev LinkEvent) bool {
			return ev.Name == mv.Name && ev.Index == m.Attrs().Index && ev.Lower == a.Attrs().Index && !ev.Gone
		}},
		{"up", func() error { return h.LinkSetUp(a) }, func(ev LinkEvent) bool {
			return ev.Name == veth.Name && ev.State.Flags&unix.IFF_UP != 0
		}},
		{"promiscuous: not followed", func() error { return h.SetPromiscOn(a) }, func(ev LinkEvent) bool {
			return ev.Name == veth.Name && ev.State.Flags&unix.IFF_PROMISC == 0 && ev.State.Flags&unix.IFF_UP != 0
		}},
		{"MTU", func() error { return h.LinkSetMTU(a, 4000) }, func(ev LinkEvent) bool {
			return ev.Name == veth.Name && ev.State.MTU == 4000
		}},
		{"address", func() error { return h.LinkSetHardwareAddr(a, mac) }, func(ev LinkEvent) bool {
			return ev.Name == veth.Name && ev.State.MAC == string(mac)
		}},
		{"alias", func() error { return h.LinkSetAlias(a, "rail test") }, func(ev LinkEvent) bool {
			return ev.Name == veth.Name && ev.State.Alias == "rail test"
		}},
		{"macvlan deleted", func() error { return h.LinkDel(m) }, func(ev LinkEvent) bool {
			return ev.Name == mv.Name && ev.Gone && ev.Lower == a.Attrs().Index
		}},
	}
	for _, s := range steps {
		must(t, s.do())
		deadline := time.After(10 * time.Second) // a hang guard
	wait:
		for {
			select {
			case ev := <-events:
				if s.ok(ev) {
					break wait
				}
			case <-deadline:
				t.Fatalf("%s: no such event", s.name)
			}
		}
	}
}

// TestParseMalformed: a datagram cut short or lying about its lengths is
// skipped where it stops making sense, never read beyond.
func TestParseMalformed(t *testing.T) {
	good := linkfiltertest.Message(unix.RTM_NEWLINK, 7, linkfiltertest.Attr(unix.IFLA_IFNAME, []byte("eth7\x00")), linkfiltertest.Attr(unix.IFLA_MTU, linkfiltertest.LE32(1500)))
	tests := []struct {
		name string
		b    []byte
		want int // events
	}{
		{"a good one", good, 1},
		{"two in one datagram", append(append([]byte{}, good...), good...), 2},
		{"empty", nil, 0},
		{"header cut", good[:10], 0},
		{"length beyond the datagram", good[:len(good)-4], 0},
		{"length below a header", func() []byte { b := clone(good); binary.NativeEndian.PutUint32(b, 4); return b }(), 0},
		{"body shorter than ifinfomsg", linkfiltertest.Message(unix.RTM_NEWLINK, 7)[:unix.NLMSG_HDRLEN+8], 0},
		{"attribute longer than the message", func() []byte {
			b := clone(good)
			binary.NativeEndian.PutUint16(b[unix.NLMSG_HDRLEN+unix.SizeofIfInfomsg:], 200)
			return b
		}(), 1},
		{"not a link message", func() []byte { b := clone(good); binary.NativeEndian.PutUint16(b[4:], unix.RTM_NEWADDR); return b }(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			eachLinkEvent(tt.b, func(LinkEvent) { n++ })
			if n != tt.want {
				t.Errorf("%d events, want %d", n, tt.want)
			}
		})
	}
}

func clone(b []byte) []byte { return append([]byte{}, b...) }
