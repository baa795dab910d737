package inventory

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/net/bpf"
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
	attrs := [][]byte{attr(unix.IFLA_IFNAME, append([]byte(m.name), 0)), attr(unix.IFLA_TXQLEN, le32(1000)), attr(unix.IFLA_MTU, le32(1500))}
	if m.lower != 0 {
		attrs = append(attrs, attr(unix.IFLA_LINK, le32(uint32(m.lower))))
	}
	attrs = append(attrs, attr(unix.IFLA_ADDRESS, []byte{2, 0, 0, 0, 0, 1}))
	if m.parent != "" {
		attrs = append(attrs, attr(iflaParentDevName, append([]byte(m.parent), 0)))
	}
	b := linkMessage(m.typ, m.index, attrs...)
	binary.NativeEndian.PutUint32(b[offChange:], m.change)
	binary.NativeEndian.PutUint32(b[offFlags:], m.flags)
	return b
}

// TestLinkFilter runs the kernel filter on link messages as the kernel
// lays them out: which pass, which are dropped.
func TestLinkFilter(t *testing.T) {
	const nic, vf, upper, veth = 7, 300, 1041, 12
	watched := watchList{indexes: []int{upper, nic, 2, vf, 3}, names: []string{"ens1f0v3", "ryinv99a"}, parents: true}
	added := func(m kernelLink) kernelLink { m.typ, m.change = unix.RTM_NEWLINK, newLink; return m }
	tests := []struct {
		name string
		w    watchList
		msg  []byte
		pass bool
	}{
		{"a watched NIC's state", watched, kernelLink{typ: unix.RTM_NEWLINK, index: nic, change: unix.IFF_UP, name: "ens1f0np0"}.bytes(), true},
		{"a watched NIC's carrier (change 0)", watched, kernelLink{typ: unix.RTM_NEWLINK, index: nic, name: "ens1f0np0"}.bytes(), true},
		{"a watched VF leaves", watched, kernelLink{typ: unix.RTM_DELLINK, index: vf, change: newLink, name: "ens1f0v0"}.bytes(), true},
		{"a watched upper device leaves", watched, kernelLink{typ: unix.RTM_DELLINK, index: upper, change: newLink, name: "mv0", lower: nic}.bytes(), true},
		{"a veth up", watched, kernelLink{typ: unix.RTM_NEWLINK, index: veth, change: unix.IFF_UP, name: "veth1a2b"}.bytes(), false},
		{"a veth's carrier", watched, kernelLink{typ: unix.RTM_NEWLINK, index: veth, name: "veth1a2b"}.bytes(), false},
		{"a veth deleted", watched, kernelLink{typ: unix.RTM_DELLINK, index: veth, change: newLink, name: "veth1a2b"}.bytes(), false},
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
		{"an upper device of a watched NIC leaves, not watched", watched, kernelLink{typ: unix.RTM_DELLINK, index: 903, change: newLink, flags: unix.IFF_UP, name: "mv7", lower: nic}.bytes(), false},
		{"a new upper device of another link, up", watched, added(kernelLink{index: 903, flags: unix.IFF_UP, name: "mv7", lower: veth}).bytes(), false},
		{"an upper device of another link set up", watched, kernelLink{typ: unix.RTM_NEWLINK, index: 903, change: unix.IFF_UP, flags: unix.IFF_UP, name: "mv7", lower: veth}.bytes(), false},
		{"an up link without a lower link changed", watched, kernelLink{typ: unix.RTM_NEWLINK, index: veth, change: unix.IFF_UP, flags: unix.IFF_UP, name: "veth1a2b"}.bytes(), false},
		{"a watched upper device's change, down", watched, kernelLink{typ: unix.RTM_NEWLINK, index: upper, change: unix.IFF_UP, name: "mv0", lower: nic}.bytes(), true},
		{"an upper device of a watched NIC set up, state blocks", watchList{indexes: []int{nic, upper}, parents: true, states: map[int]linkSeen{nic: {name: "ens1f0np0"}}},
			kernelLink{typ: unix.RTM_NEWLINK, index: 903, change: unix.IFF_UP, flags: unix.IFF_UP, name: "mv7", lower: nic}.bytes(), true},
		{"an upper device of a watched NIC changed down, state blocks", watchList{indexes: []int{nic, upper}, parents: true, states: map[int]linkSeen{nic: {name: "ens1f0np0"}}},
			kernelLink{typ: unix.RTM_NEWLINK, index: 903, flags: unix.IFF_BROADCAST, name: "mv7", lower: nic}.bytes(), false},
		{"a new link without a parent, parents not told", watchList{indexes: []int{nic}}, added(kernelLink{index: veth, name: "veth1a2b"}).bytes(), true},
		{"a watched NIC, parents not told", watchList{indexes: []int{nic}}, kernelLink{typ: unix.RTM_NEWLINK, index: nic}.bytes(), true},
		{"an unwatched link, parents not told", watchList{indexes: []int{nic}}, kernelLink{typ: unix.RTM_NEWLINK, index: veth}.bytes(), false},
		{"nothing watched: a new link", watchList{parents: true}, added(kernelLink{index: 5, name: "p", parent: "0000:01:00.0"}).bytes(), true},
		{"nothing watched: a link's state", watchList{parents: true}, kernelLink{typ: unix.RTM_NEWLINK, index: 5}.bytes(), false},
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
			prog, err := linkFilter(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if got := runFilter(t, prog, tt.msg) != 0; got != tt.pass {
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
			prog, err := linkFilter(watchList{indexes: indexes, parents: true})
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
				if got := runFilter(t, prog, msg) != 0; got != set[i] {
					t.Fatalf("ifindex %d passed %v, want %v (%d instructions)", i, got, set[i], len(prog))
				}
			}
		})
	}
	many := make([]int, maxFilter)
	for i := range many {
		many[i] = i + 1
	}
	if prog, err := linkFilter(watchList{indexes: many}); err == nil {
		t.Errorf("a filter of %d links was made (%d instructions), want an error past %d", len(many), len(prog), maxFilter)
	}
}

// runFilter runs a classic BPF program on msg as the kernel does and
// returns what it returned (0: dropped). bpf.VM does not know the
// SKF_AD_NLATTR extension, so this interprets the instructions the
// filter uses; an out-of-bounds load drops, as in the kernel.
func runFilter(t *testing.T, prog []bpf.Instruction, msg []byte) uint32 {
	t.Helper()
	if _, err := bpf.Assemble(prog); err != nil {
		t.Fatalf("the program does not assemble: %v", err)
	}
	var a, x uint32
	load := func(off uint32, size int) (uint32, bool) {
		if uint64(off)+uint64(size) > uint64(len(msg)) {
			return 0, false
		}
		switch size {
		case 1:
			return uint32(msg[off]), true
		case 2:
			return uint32(binary.BigEndian.Uint16(msg[off:])), true
		}
		return binary.BigEndian.Uint32(msg[off:]), true
	}
	for pc := 0; pc < len(prog); pc++ {
		ok := true
		switch ins := prog[pc].(type) {
		case bpf.LoadExtension:
			switch ins.Num {
			case bpf.ExtLen:
				a = uint32(len(msg))
			case bpf.ExtNetlinkAttr:
				a = nlattr(msg, a, x)
			default:
				t.Fatalf("extension %d", ins.Num)
			}
		case bpf.LoadAbsolute:
			a, ok = load(ins.Off, ins.Size)
		case bpf.LoadIndirect:
			a, ok = load(ins.Off+x, ins.Size)
		case bpf.LoadConstant:
			if ins.Dst == bpf.RegA {
				a = ins.Val
			} else {
				x = ins.Val
			}
		case bpf.TAX:
			x = a
		case bpf.ALUOpConstant:
			if ins.Op != bpf.ALUOpAnd {
				t.Fatalf("ALU operation %v", ins.Op)
			}
			a &= ins.Val
		case bpf.Jump:
			pc += int(ins.Skip)
		case bpf.JumpIf:
			var yes bool
			switch ins.Cond {
			case bpf.JumpEqual:
				yes = a == ins.Val
			case bpf.JumpGreaterOrEqual:
				yes = a >= ins.Val
			case bpf.JumpNotEqual:
				yes = a != ins.Val
			case bpf.JumpBitsSet:
				yes = a&ins.Val != 0
			default:
				t.Fatalf("condition %v", ins.Cond)
			}
			if yes {
				pc += int(ins.SkipTrue)
			} else {
				pc += int(ins.SkipFalse)
			}
		case bpf.RetConstant:
			return ins.Val
		default:
			t.Fatalf("instruction %T", ins)
		}
		if !ok {
			return 0
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// nlattr is the kernel's SKF_AD_NLATTR: the offset of the first
// attribute of type typ in msg from offset from, 0 when there is none.
func nlattr(msg []byte, from, typ uint32) uint32 {
	if uint64(from)+unix.SizeofRtAttr > uint64(len(msg)) {
		return 0
	}
	for off := int(from); off+unix.SizeofRtAttr <= len(msg); {
		l := int(binary.NativeEndian.Uint16(msg[off:]))
		if l < unix.SizeofRtAttr || off+l > len(msg) {
			return 0
		}
		if uint32(binary.NativeEndian.Uint16(msg[off+2:])&nlaTypeMask) == typ {
			return uint32(off)
		}
		off += rtaAlign(l)
	}
	return 0
}
