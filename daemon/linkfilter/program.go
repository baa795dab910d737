// Package linkfilter is the kernel filter on raild's link-event socket:
// the classic BPF program that drops, in the kernel, the link events the
// inventory would classify as no concern of its (program.go), its
// comparisons of a watched link's last state (state.go), and the watch
// that keeps the program on the links the inventory follows (watch.go).
package linkfilter

import (
	"encoding/binary"
	"fmt"
	"slices"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The kernel filter: a classic BPF program on the link-event socket
// (SO_ATTACH_FILTER) that has the kernel drop, before it wakes raild, the
// events raild would classify as no concern of its. It passes
//   - an RTM_NEWLINK or RTM_DELLINK of a watched ifindex: the netdevs of
//     the snapshot's NICs and VFs, the links whose events concerned the
//     inventory (a NIC-like link that came, an upper device of a NIC's);
//   - an RTM_NEWLINK whose ifi_change is all ones (the kernel sends that
//     value only for a link registered in this netns or moved into it)
//     of a link that could be a NIC: one with a parent device (the
//     kernel's IFLA_PARENT_DEV_NAME, Linux 5.16 on: the `device` of
//     sysfs; every new link on older kernels), one named as a snapshot's
//     netdev that is not in the netns now (a NIC back from a pod, a
//     stand-in); on a machine whose sysfs is not the kernel's (raild's
//     --root: a fake machine, its NICs' netdevs stand-ins without a
//     parent device), only those named: the snapshot's netdevs not in
//     the netns and the netdevs that sysfs gives a `device`;
//   - an RTM_NEWLINK, new or not, of an upper device of a watched link
//     (IFLA_LINK) that is up (IFF_UP in ifi_flags): one that arrives up
//     or is set up in this netns;
// and drops everything else: a pod's host veth coming, going up, getting
// its carrier, leaving; a down upper device of a NIC's coming and moved
// out (upstream macvlan's), or left down on it (read at the next full
// rescan); every other message.
//
// Netlink's fields are in the host's byte order and a classic BPF load
// reads big-endian, so each constant is compared as the load sees it
// (asLoaded32, asLoaded16); attributes are found by the kernel's own
// parser (the SKF_AD_NLATTR extension).

// Offsets in a link message: the netlink header, then the ifinfomsg, then
// the attributes.
const (
	offType   = 4                      // nlmsghdr.nlmsg_type, 2 bytes
	offIndex  = unix.NLMSG_HDRLEN + 4  // ifinfomsg.ifi_index, 4 bytes
	offChange = unix.NLMSG_HDRLEN + 12 // ifinfomsg.ifi_change, 4 bytes
	minLink   = unix.NLMSG_HDRLEN + unix.SizeofIfInfomsg
	NewLink   = 0xffffffff // ifi_change of a link new to the netns (registered in it or moved into it)
	keepAll   = 0xffffffff // a filter's "pass the whole message"
)

// iflaParentDevName is IFLA_PARENT_DEV_NAME (Linux 5.16).
const iflaParentDevName = 56

// maxFilter is the longest program set: a filter of more links (a node
// with hundreds of VFs) is not set and raild reads every event, as it did
// before there was one. It stays well under the kernel's 4,096
// instructions and the socket option memory the program is charged to
// (net.core.optmem_max, 20 KiB before Linux 6.9).
const maxFilter = 1024

// leafSize is how many ifindexes the jump tree compares one by one.
const leafSize = 4

// List is what a filter passes.
type List struct {
	Indexes []int    // links by ifindex (order and repeats do not matter)
	Names   []string // new links of these names
	// Parents: the kernel names a link's parent device, so a new link
	// without one is no NIC; false: every new link passes, unless ByName.
	Parents bool
	// ByName: the sysfs raild reads is not the kernel's (a fake
	// machine), so the kernel's parent devices say nothing of its NICs: a
	// new link passes only when Names holds its name.
	ByName bool
	// States are the last states raild read of watched links, by
	// ifindex: an RTM_NEWLINK of one that differs from it in none of the
	// fields a link event follows (its name and State) is dropped.
	States map[int]Seen
}

// Program is the program for w, or an error when it is longer than
// maxFilter. When the state comparisons (w.States) make it longer, it is
// the program without them: every event of a watched link passes.
func Program(w List) ([]bpf.Instruction, error) {
	keys := make([]uint32, 0, len(w.Indexes))
	for _, index := range w.Indexes {
		keys = append(keys, asLoaded32(uint32(index)))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var blocks map[uint32][]bpf.Instruction
	if len(w.States) > 0 {
		blocks = stateBlocks(w.States)
	}
	prog := filterProgram(w, keys, blocks)
	if len(prog) > maxFilter && len(blocks) > 0 {
		prog = filterProgram(w, keys, nil)
	}
	if len(prog) > maxFilter {
		return nil, fmt.Errorf("a filter of %d links and %d names takes %d instructions, more than %d",
			len(w.Indexes), len(w.Names), len(prog), maxFilter)
	}
	return prog, nil
}

// missMark marks, while a program is laid out, the changes tree's
// "not a watched link": filterProgram makes each a jump to the upper
// check. No block returns it.
const missMark = 0xfffffffe

// filterProgram lays the program out: the changes tree takes an
// RTM_NEWLINK of a link that is not new (a watched link's change, run
// through its state block when blocks has one); the new link's checks
// follow, then the upper check, which a change of a link not watched
// jumps to and the new link's checks fall into: it passes an upper
// device of a watched link that is up. Its tree of the watched links
// also passes a link's departure.
func filterProgram(w List, keys []uint32, blocks map[uint32][]bpf.Instruction) []bpf.Instruction {
	changes := indexTree(keys, blocks, bpf.RetConstant{Val: missMark})
	checks := newLinkChecks(w)
	upper := upperCheck()
	tree := indexTree(keys, nil, bpf.RetConstant{Val: 0})
	const head = 13
	prog := []bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtLen},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: minLink, SkipFalse: 7}, // too short: drop
		bpf.LoadAbsolute{Off: offType, Size: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: asLoaded16(unix.RTM_NEWLINK), SkipFalse: 4},
		bpf.LoadAbsolute{Off: offChange, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: NewLink, SkipTrue: 6}, // a new link
		bpf.LoadAbsolute{Off: offIndex, Size: 4},
		bpf.Jump{Skip: 5}, // a change: to the changes tree
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: asLoaded16(unix.RTM_DELLINK), SkipTrue: 1},
		bpf.RetConstant{Val: 0},
		bpf.LoadAbsolute{Off: offIndex, Size: 4},
		bpf.Jump{Skip: uint32(1 + len(changes) + len(checks) + len(upper))}, // a departure: to the tree
		bpf.Jump{Skip: uint32(len(changes))},                                // to the new link's checks
	}
	prog = append(prog, changes...)
	prog = append(prog, checks...)
	toUpper := len(prog)
	for i := head; i < head+len(changes); i++ {
		if prog[i] == (bpf.RetConstant{Val: missMark}) {
			prog[i] = bpf.Jump{Skip: uint32(toUpper - i - 1)}
		}
	}
	prog = append(prog, upper...)
	return append(prog, tree...)
}

// newLinkChecks pass a new link that could be a NIC (see the top): one of
// the names, one with a parent device (unless w.ByName); any other goes
// on to the upper check after them.
func newLinkChecks(w List) []bpf.Instruction {
	if !w.Parents && !w.ByName {
		return []bpf.Instruction{bpf.RetConstant{Val: keepAll}}
	}
	var names []bpf.Instruction
	for _, name := range slices.Compact(slices.Sorted(slices.Values(w.Names))) {
		names = append(names, nameCheck(name)...)
	}
	prog := append(findAttr(unix.IFLA_IFNAME),
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipFalse: 1}, // no name: skip the names
		bpf.Jump{Skip: uint32(len(names) + 1)},
		bpf.TAX{},
	)
	prog = append(prog, names...)
	if w.ByName {
		return prog
	}
	prog = append(prog, findAttr(iflaParentDevName)...)
	return append(prog,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: 1},
		bpf.RetConstant{Val: keepAll}, // a parent device: could be a NIC
	)
}

// upperCheck passes a link that is up (IFF_UP) and has a lower link
// (IFLA_LINK) when the tree of the watched links that follows it finds
// that lower link: an upper device of a NIC's that arrives up or is set
// up. A down one (upstream macvlan's, made down and moved into a pod) is
// dropped, new or changed.
func upperCheck() []bpf.Instruction {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offFlags, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: asLoaded32(unix.IFF_UP), SkipTrue: 1},
		bpf.RetConstant{Val: 0}, // down
	}
	prog = append(prog, findAttr(unix.IFLA_LINK)...)
	return append(prog,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipFalse: 1},
		bpf.RetConstant{Val: 0}, // no lower link
		bpf.TAX{},
		bpf.LoadIndirect{Off: unix.SizeofRtAttr, Size: 4},
	)
}

// findAttr has the kernel find the link message's attribute of type
// attr: A is its offset, 0 when there is none.
func findAttr(attr uint32) []bpf.Instruction {
	return []bpf.Instruction{
		bpf.LoadConstant{Dst: bpf.RegA, Val: minLink},
		bpf.LoadConstant{Dst: bpf.RegX, Val: attr},
		bpf.LoadExtension{Num: bpf.ExtNetlinkAttr},
	}
}

// nameCheck passes the message when the attribute at X is IFLA_IFNAME
// holding name (as the kernel lays it out: NUL-terminated, zero-padded
// to 4 bytes) and goes on after it otherwise.
func nameCheck(name string) []bpf.Instruction {
	value := append([]byte(name), 0)
	value = append(value, make([]byte, rtaAlign(len(value))-len(value))...)
	words := len(value) / 4
	check := []bpf.Instruction{
		bpf.LoadIndirect{Off: 0, Size: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: asLoaded16(uint16(unix.SizeofRtAttr + len(name) + 1)), SkipFalse: uint8(2*words + 1)},
	}
	for i := range words {
		check = append(check,
			bpf.LoadIndirect{Off: uint32(unix.SizeofRtAttr + 4*i), Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: binary.BigEndian.Uint32(value[4*i:]), SkipFalse: uint8(2*(words-i) - 1)},
		)
	}
	return append(check, bpf.RetConstant{Val: keepAll})
}

// indexTree is a sorted jump tree over keys (the ifindex as loaded is in
// A): run miss when A is none of them; when it is one, pass, or run the
// key's block when blocks has one (a block returns). Each node compares
// with its middle key and jumps over its left half (an unconditional
// jump, so no branch exceeds a conditional jump's 255); each leaf tests
// up to leafSize keys.
func indexTree(keys []uint32, blocks map[uint32][]bpf.Instruction, miss bpf.Instruction) []bpf.Instruction {
	if len(keys) <= leafSize {
		return indexLeaf(keys, blocks, miss)
	}
	mid := len(keys) / 2
	left, right := indexTree(keys[:mid], blocks, miss), indexTree(keys[mid:], blocks, miss)
	node := []bpf.Instruction{
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: keys[mid], SkipFalse: 1},
		bpf.Jump{Skip: uint32(len(left))},
	}
	return append(append(node, left...), right...)
}

// indexLeaf tests keys one by one: a key without a block passes, one
// with runs it, none runs miss.
func indexLeaf(keys []uint32, blocks map[uint32][]bpf.Instruction, miss bpf.Instruction) []bpf.Instruction {
	var passing, blocked []uint32
	for _, k := range keys {
		if _, has := blocks[k]; has {
			blocked = append(blocked, k)
		} else {
			passing = append(passing, k)
		}
	}
	var leaf []bpf.Instruction
	for _, k := range blocked {
		block := blocks[k]
		leaf = append(leaf,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: k, SkipTrue: 1},
			bpf.Jump{Skip: uint32(len(block))}, // not k: over its block
		)
		leaf = append(leaf, block...)
	}
	for i, k := range passing {
		leaf = append(leaf, bpf.JumpIf{Cond: bpf.JumpEqual, Val: k, SkipTrue: uint8(len(passing) - i)})
	}
	return append(leaf, miss, bpf.RetConstant{Val: keepAll})
}

// asLoaded32 is v as a classic BPF word load reads it from a field the
// kernel wrote in the host's byte order.
func asLoaded32(v uint32) uint32 {
	return binary.BigEndian.Uint32(binary.NativeEndian.AppendUint32(nil, v))
}

// asLoaded16 is asLoaded32 for a half-word field.
func asLoaded16(v uint16) uint32 {
	return uint32(binary.BigEndian.Uint16(binary.NativeEndian.AppendUint16(nil, v)))
}

// rtaAlign rounds an attribute's length up as the kernel lays attributes out.
func rtaAlign(n int) int { return (n + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1) }
