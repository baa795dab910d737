package linkfilter

import (
	"encoding/binary"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The kernel filter's state comparisons: for a watched link whose last
// state raild read is known, an RTM_NEWLINK that is not a new link's
// passes only when it differs from that state in a field a LinkEvent
// follows (the inventory's parseLink): the flags raild keeps (FollowedFlags), the
// name, MTU, master, operational state, address and alias. The kernel
// sends a NIC's netdev such an event, ifi_change 0, for many things that
// change none of them: an upper device added or removed (someone's
// macvlan on it), promiscuity toggled, features, queue lengths.
//
// A comparison is against the state of the link's last event raild read.
// One that arrives while the program still holds an older state is
// compared with that older state: a change passes; a change back to the
// older state is dropped, but the read that the change asks for comes
// after the program is replaced, so it sees it (see Watch.Saw).

// State is what a NIC's record can follow among a link's attributes:
// the flags that say it is up and has a carrier, its operational state,
// MTU, master (bond, bridge), address and alias. An event of a NIC's
// netdev that changes none of them (the kernel sends one when an upper
// device such as someone's macvlan is added on it or removed, which may
// also turn promiscuous mode on and off, and for counters) asks for no
// read; the timer's rescan sees what it may have changed.
type State struct {
	Flags     uint32 // FollowedFlags only
	OperState uint8
	MTU       int
	Master    int
	MAC       string
	Alias     string
}

// FollowedFlags are the interface flags a NIC's record depends on.
const FollowedFlags = unix.IFF_UP | unix.IFF_RUNNING | unix.IFF_LOWER_UP | unix.IFF_DORMANT

// Seen is a link's name and state at its last event.
type Seen struct {
	Name  string
	State State
}

// offFlags is ifinfomsg.ifi_flags, 4 bytes.
const offFlags = unix.NLMSG_HDRLEN + 8

// stateBlocks are the comparisons of each link's state, by its ifindex
// as loaded; a link whose block would be too long for the program's
// jumps has none (its every event passes).
// maxStateLinks bounds the links given states: a state block takes some
// 40 instructions, and a program over the filter's bound falls back to
// none at all, rebuilt with every event. A node's NICs fit; on a node
// whose VFs are watched too (each moved by another plugin's pods) the
// links beyond pass every event of theirs, as without states, and cost
// no program per event.
const maxStateLinks = 16

func stateBlocks(states map[int]Seen) map[uint32][]bpf.Instruction {
	blocks := make(map[uint32][]bpf.Instruction, len(states))
	for index, seen := range states {
		if block, ok := stateBlock(seen); ok {
			blocks[asLoaded32(uint32(index))] = block
		}
	}
	return blocks
}

// stateBlock drops a message whose followed fields are those of seen and
// passes any other.
func stateBlock(seen Seen) ([]bpf.Instruction, bool) {
	var b compareBlock
	b.add(bpf.LoadAbsolute{Off: offFlags, Size: 4}, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: asLoaded32(FollowedFlags)})
	b.differsUnless(asLoaded32(seen.State.Flags))
	b.attrBytes(unix.IFLA_IFNAME, seen.Name)
	b.attrWord(unix.IFLA_MTU, uint32(seen.State.MTU), 4)
	b.attrWord(unix.IFLA_MASTER, uint32(seen.State.Master), 4)
	b.attrWord(unix.IFLA_OPERSTATE, uint32(seen.State.OperState), 1)
	b.attrRaw(unix.IFLA_ADDRESS, []byte(seen.State.MAC))
	b.attrBytes(unix.IFLA_IFALIAS, seen.State.Alias)
	return b.finish()
}

// compareBlock builds a block of comparisons, each of which jumps to the
// block's last instruction (pass) when the message differs.
type compareBlock struct {
	prog    []bpf.Instruction
	differs []int // the conditional jumps to the pass: their index
}

func (b *compareBlock) add(ins ...bpf.Instruction) { b.prog = append(b.prog, ins...) }

// differsUnless passes the message unless A is want.
func (b *compareBlock) differsUnless(want uint32) { b.differsIf(bpf.JumpNotEqual, want) }

// differsIf passes the message when A compares with val as cond says.
func (b *compareBlock) differsIf(cond bpf.JumpTest, val uint32) {
	b.differs = append(b.differs, len(b.prog))
	b.add(bpf.JumpIf{Cond: cond, Val: val})
}

// attrWord compares the value (4 or 1 bytes) of an attribute that
// the inventory's parseLink reads as 0 when it is absent.
func (b *compareBlock) attrWord(attr, want uint32, size int) {
	b.add(findAttr(attr)...)
	if want == 0 {
		b.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: 3}) // absent: as it was
	} else {
		b.differsIf(bpf.JumpEqual, 0) // absent
	}
	b.add(bpf.TAX{}, bpf.LoadIndirect{Off: unix.SizeofRtAttr, Size: size})
	if size == 4 {
		want = asLoaded32(want)
	}
	b.differsUnless(want)
}

// attrBytes compares a string attribute (NUL-terminated): "" is an absent
// one.
func (b *compareBlock) attrBytes(attr uint32, want string) {
	if want == "" {
		b.attrRaw(attr, nil)
		return
	}
	b.attrRaw(attr, append([]byte(want), 0))
}

// attrRaw compares an attribute's bytes (zero-padded to 4 bytes, as the
// kernel lays them out): none is an absent one.
func (b *compareBlock) attrRaw(attr uint32, want []byte) {
	b.add(findAttr(attr)...)
	if len(want) == 0 {
		b.differsUnless(0)
		return
	}
	b.differsIf(bpf.JumpEqual, 0) // absent
	b.add(bpf.TAX{}, bpf.LoadIndirect{Off: 0, Size: 2})
	b.differsUnless(asLoaded16(uint16(unix.SizeofRtAttr + len(want))))
	padded := append(want, make([]byte, rtaAlign(len(want))-len(want))...)
	for i := 0; i < len(padded); i += 4 {
		b.add(bpf.LoadIndirect{Off: uint32(unix.SizeofRtAttr + i), Size: 4})
		b.differsUnless(binary.BigEndian.Uint32(padded[i:]))
	}
}

// finish ends the block: drop when every comparison held, pass
// otherwise. false when a jump is longer than a conditional jump's 255.
func (b *compareBlock) finish() ([]bpf.Instruction, bool) {
	b.add(bpf.RetConstant{Val: 0}, bpf.RetConstant{Val: keepAll})
	pass := len(b.prog) - 1
	for _, at := range b.differs {
		skip := pass - at - 1
		if skip > 255 {
			return nil, false
		}
		j := b.prog[at].(bpf.JumpIf)
		j.SkipTrue = uint8(skip) // taken when the message differs
		b.prog[at] = j
	}
	return b.prog, true
}
