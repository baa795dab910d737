package linkfilter

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/railcni/rail/daemon/linkfilter/linkfiltertest"
	"golang.org/x/sys/unix"
)

// kernelLink is a link message as the kernel lays it out: the netlink
// header and the ifinfomsg in the host's byte order, IFLA_IFNAME first,
// then other attributes (NUL-terminated, zero-padded).
type kernelLink struct {
	typ    uint16
	index  int32
	change uint32
	flags  uint32 // ifi_flags
	name   string
	lower  int32  // IFLA_LINK, 0 none
	parent string // IFLA_PARENT_DEV_NAME, "" none
}

func (m kernelLink) bytes() []byte {
	attrs := [][]byte{linkfiltertest.Attr(unix.IFLA_IFNAME, append([]byte(m.name), 0)), linkfiltertest.Attr(unix.IFLA_TXQLEN, linkfiltertest.LE32(1000)), linkfiltertest.Attr(unix.IFLA_MTU, linkfiltertest.LE32(1500))}
	if m.lower != 0 {
		attrs = append(attrs, linkfiltertest.Attr(unix.IFLA_LINK, linkfiltertest.LE32(uint32(m.lower))))
	}
	attrs = append(attrs, linkfiltertest.Attr(unix.IFLA_ADDRESS, []byte{2, 0, 0, 0, 0, 1}))
	if m.parent != "" {
		attrs = append(attrs, linkfiltertest.Attr(iflaParentDevName, append([]byte(m.parent), 0)))
	}
	b := linkfiltertest.Message(m.typ, m.index, attrs...)
	binary.NativeEndian.PutUint32(b[linkfiltertest.OffChange:], m.change)
	binary.NativeEndian.PutUint32(b[linkfiltertest.OffFlags:], m.flags)
	return b
}

// TestLinkFilter runs the kernel filter on link messages as the kernel
// lays them out: which pass, which are dropped.
func TestLinkFilter(t *testing.T) {
	const nic, vf, upper, veth = 7, 300, 1041, 12
	watched := List{Indexes: []int{upper, nic, 2, vf, 3}, Names: []string{"ens1f0v3", "ryinv99a"}, Parents: true}
	added := func(m kernelLink) kernelLink { m.typ, m.change = unix.RTM_NEWLINK, NewLink; return m }
	tests := []struct {
		name string
		w    List
		msg  []byte
		pass bool
	}{
		{"a watched NIC's state", watched, kernelLink{typ: unix.RTM_NEWLINK, index: nic, change: unix.IFF_UP, name: "ens1f0np0"}.bytes(), true},
		{"a watched NIC's carrier (change 0)", watched, kernelLink{typ: unix.RTM_NEWLINK, index: nic, name: "ens1f0np0"}.bytes(), true},
		{"a watched VF leaves", watched, kernelLink{typ: unix.RTM_DELLINK, index: vf, change: NewLink, name: "ens1f0v0"}.bytes(), true},
		{"a watched upper device leaves", watched, kernelLink{typ: unix.RTM_DELLINK, index: upper, change: NewLink, name: "mv0", lower: nic}.bytes(), true},
		{"a veth up", watched, kernelLink{typ: unix.RTM_NEWLINK, index: veth, change: unix.IFF_UP, name: "veth1a2b"}.bytes(), false},
		{"a veth's carrier", watched, kernelLink{typ: unix.RTM_NEWLINK, index: veth, name: "veth1a2b"}.bytes(), false},
		{"a veth deleted", watched, kernelLink{typ: unix.RTM_DELLINK, index: veth, change: NewLink, name: "veth1a2b"}.bytes(), false},
		{"a new veth", watched, added(kernelLink{index: veth, name: "veth1a2b", lower: 4}).bytes(), false},
		{"a new veth of a watched ifindex's peer number in another netns", watched, added(kernelLink{index: veth, name: "veth1a2b"}).bytes(), false},
		{"a new link with a parent device (a VF bound)", watched, added(kernelLink{index: 900, name: "eth5", parent: "0000:3b:02.1"}).bytes(), true},
		{"a new link of an awaited name (a NIC back from its pod)", watched, added(kernelLink{index: 901, name: "ens1f0v3"}).bytes(), true},
		{"a new link of an awaited name, shorter", watched, added(kernelLink{index: 901, name: "ens1f0v"}).bytes(), false},
		{"a new link of an awaited name, longer", watched, added(kernelLink{index: 901, name: "ens1f0v33"}).bytes(), false},
		{"a new stand-in of an awaited name", watched, added(kernelLink{index: 902, name: "ryinv99a"}).bytes(), true},
		{"a new upper device of a watched NIC, up", watched, added(kernelLink{index: 903, flags: unix.IFF_UP, name: "mv7", lower: nic}).bytes(), true},
		{"a new upper device of a watched NIC, down (upstream macvlan's)", watched, added(kernelLink{index: 903, flags: unix.IFF_BROADCAST, name: "mv7", lower: nic}).bytes(), false},
		{"an upper device of a watched NIC set up", watched, kernelLink{typ: unix.RTM_NEWLINK, index: 903, change: unix.IFF_UP, flags: unix.IFF_UP | unix.IFF_BROADCAST, name: "mv7", lower: nic}.bytes(), true},
		{"an upper device of a watched NIC changed, down", watched, kernelLink{typ: unix.RTM_NEWLINK, index: 903, flags: unix.IFF_BROADCAST, name: "mv7", lower: nic}.bytes(), false},
		{"an upper device of a watched NIC leaves, not watched", watched, kernelLink{typ: unix.RTM_DELLINK, index: 903, change: NewLink, flags: unix.IFF_UP, name: "mv7", lower: nic}.bytes(), false},
		{"a new upper device of another link, up", watched, added(kernelLink{index: 903, flags: unix.IFF_UP, name: "mv7", lower: veth}).bytes(), false},
		{"an upper device of another link set up", watched, kernelLink{typ: unix.RTM_NEWLINK, index: 903, change: unix.IFF_UP, flags: unix.IFF_UP, name: "mv7", lower: veth}.bytes(), false},
		{"an up link without a lower link changed", watched, kernelLink{typ: unix.RTM_NEWLINK, index: veth, change: unix.IFF_UP, flags: unix.IFF_UP, name: "veth1a2b"}.bytes(), false},
		{"a watched upper device's change, down", watched, kernelLink{typ: unix.RTM_NEWLINK, index: upper, change: unix.IFF_UP, name: "mv0", lower: nic}.bytes(), true},
		{"an upper device of a watched NIC set up, state blocks", List{Indexes: []int{nic, upper}, Parents: true, States: map[int]Seen{nic: {Name: "ens1f0np0"}}},
			kernelLink{typ: unix.RTM_NEWLINK, index: 903, change: unix.IFF_UP, flags: unix.IFF_UP, name: "mv7", lower: nic}.bytes(), true},
		{"an upper device of a watched NIC changed down, state blocks", List{Indexes: []int{nic, upper}, Parents: true, States: map[int]Seen{nic: {Name: "ens1f0np0"}}},
			kernelLink{typ: unix.RTM_NEWLINK, index: 903, flags: unix.IFF_BROADCAST, name: "mv7", lower: nic}.bytes(), false},
		{"a new link without a parent, parents not told", List{Indexes: []int{nic}}, added(kernelLink{index: veth, name: "veth1a2b"}).bytes(), true},
		{"a watched NIC, parents not told", List{Indexes: []int{nic}}, kernelLink{typ: unix.RTM_NEWLINK, index: nic}.bytes(), true},
		{"an unwatched link, parents not told", List{Indexes: []int{nic}}, kernelLink{typ: unix.RTM_NEWLINK, index: veth}.bytes(), false},
		{"a fake machine: a new link named", List{Indexes: []int{nic}, Names: []string{"rb1a2b3cn7"}, ByName: true},
			added(kernelLink{index: 901, name: "rb1a2b3cn7"}).bytes(), true},
		{"a fake machine: a new veth not named", List{Indexes: []int{nic}, Names: []string{"rb1a2b3cn7"}, ByName: true},
			added(kernelLink{index: veth, name: "veth1a2b"}).bytes(), false},
		{"a fake machine: a parent device alone does not pass", List{Indexes: []int{nic}, Names: []string{"rb1a2b3cn7"}, ByName: true},
			added(kernelLink{index: 900, name: "eth5", parent: "0000:3b:02.1"}).bytes(), false},
		{"a fake machine: a watched NIC's change", List{Indexes: []int{nic}, ByName: true}, kernelLink{typ: unix.RTM_NEWLINK, index: nic}.bytes(), true},
		{"nothing watched: a new link", List{Parents: true}, added(kernelLink{index: 5, name: "p", parent: "0000:01:00.0"}).bytes(), true},
		{"nothing watched: a link's state", List{Parents: true}, kernelLink{typ: unix.RTM_NEWLINK, index: 5}.bytes(), false},
		{"an address message", watched, func() []byte {
			b := kernelLink{index: nic}.bytes()
			binary.NativeEndian.PutUint16(b[4:6], unix.RTM_NEWADDR)
			return b
		}(), false},
		{"a message shorter than a link's", watched, kernelLink{typ: unix.RTM_NEWLINK, index: nic}.bytes()[:minLink-1], false},
		{"a header alone", watched, kernelLink{typ: unix.RTM_NEWLINK, index: nic}.bytes()[:unix.NLMSG_HDRLEN], false},
		{"an empty datagram", watched, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := Program(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if got := linkfiltertest.Run(t, prog, tt.msg) != 0; got != tt.pass {
				t.Errorf("passed %v, want %v", got, tt.pass)
			}
		})
	}
}

// TestLinkFilterLarge: a filter of many ifindexes (a jump tree deeper
// than a conditional jump reaches) passes exactly them, up to the longest
// program set; past it, linkFilter says so.
func TestLinkFilterLarge(t *testing.T) {
	for _, n := range []int{0, 1, 4, 5, 17, 100, 190} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(n), 1))
			set := map[int]bool{}
			var indexes []int
			for len(indexes) < n {
				i := 1 + r.IntN(1<<20)
				if !set[i] {
					set[i] = true
					indexes = append(indexes, i)
				}
			}
			prog, err := Program(List{Indexes: indexes, Parents: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bpf.Assemble(prog); err != nil {
				t.Fatalf("%d instructions do not assemble: %v", len(prog), err)
			}
			probe := append([]int{0, 1, 1<<31 - 1, 1 << 20}, indexes...)
			for _, i := range indexes {
				probe = append(probe, i-1, i+1)
			}
			for _, i := range probe {
				msg := kernelLink{typ: unix.RTM_NEWLINK, index: int32(i), change: unix.IFF_UP}.bytes()
				if got := linkfiltertest.Run(t, prog, msg) != 0; got != set[i] {
					t.Fatalf("ifindex %d passed %v, want %v (%d instructions)", i, got, set[i], len(prog))
				}
			}
		})
	}
	many := make([]int, maxFilter)
	for i := range many {
		many[i] = i + 1
	}
	if prog, err := Program(List{Indexes: many}); err == nil {
		t.Errorf("a filter of %d links was made (%d instructions), want an error past %d", len(many), len(prog), maxFilter)
	}
}
