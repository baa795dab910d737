// Package linkfiltertest is for tests of the kernel link filter: link
// messages laid out as the kernel lays them out, and a classic BPF
// interpreter that runs a filter on them as the kernel does.
package linkfiltertest

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Message is a netlink link message (RTM_NEWLINK, RTM_DELLINK) of
// ifindex index with attrs after its ifinfomsg, in the host's byte order.
func Message(typ uint16, index int32, attrs ...[]byte) []byte {
	body := make([]byte, unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(body[4:], uint32(index))
	for _, a := range attrs {
		body = append(body, a...)
	}
	hdr := make([]byte, unix.NLMSG_HDRLEN)
	binary.NativeEndian.PutUint32(hdr, uint32(len(hdr)+len(body)))
	binary.NativeEndian.PutUint16(hdr[4:], typ)
	return append(hdr, body...)
}

// Attr is one attribute, zero-padded as the kernel pads it.
func Attr(typ uint16, v []byte) []byte {
	b := make([]byte, unix.SizeofRtAttr, rtaAlign(unix.SizeofRtAttr+len(v)))
	binary.NativeEndian.PutUint16(b, uint16(unix.SizeofRtAttr+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, v...)
	return b[:cap(b)]
}

// LE32 is v in the host's byte order (an attribute's u32).
func LE32(v uint32) []byte { b := make([]byte, 4); binary.NativeEndian.PutUint32(b, v); return b }

// Offsets in a link message of the fields tests set.
const (
	OffType   = 4                      // nlmsghdr.nlmsg_type
	OffFlags  = unix.NLMSG_HDRLEN + 8  // ifinfomsg.ifi_flags
	OffChange = unix.NLMSG_HDRLEN + 12 // ifinfomsg.ifi_change
)

func rtaAlign(n int) int { return (n + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1) }

// nlaTypeMask strips an attribute type's nested and byte-order flags.
const nlaTypeMask = 0x3fff

// Run runs a classic BPF program on msg as the kernel does and
// returns what it returned (0: dropped). bpf.VM does not know the
// SKF_AD_NLATTR extension, so this interprets the instructions the
// filter uses; an out-of-bounds load drops, as in the kernel.
func Run(t *testing.T, prog []bpf.Instruction, msg []byte) uint32 {
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
