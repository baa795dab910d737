package inventory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/net/bpf"

	"github.com/railcni/rail/daemon/linkfilter"
	"golang.org/x/sys/unix"
)

// Watch replaces the socket's filter (SO_ATTACH_FILTER again swaps the
// program atomically: no event is read under neither) or, when the
// program would be too long, takes it off.
func (l *NetlinkLinks) Watch(w linkfilter.List) (bool, error) {
	var prog []bpf.RawInstruction
	if insns, err := linkfilter.Program(w); err == nil {
		if prog, err = bpf.Assemble(insns); err != nil {
			return false, fmt.Errorf("link event filter: %w", err)
		}
	}
	var opErr error
	err := l.conn.Control(func(fd uintptr) {
		if prog == nil {
			if err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DETACH_FILTER, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				opErr = err
			}
			return
		}
		filter := make([]unix.SockFilter, len(prog))
		for i, ins := range prog {
			filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
		}
		opErr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
			&unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]})
	})
	if err == nil {
		err = opErr
	}
	if err != nil {
		return false, fmt.Errorf("link event filter of %d links and %d names: %w", len(w.Indexes), len(w.Names), err)
	}
	return prog != nil, nil
}

// Link asks the request socket for a link of the netns by ifindex or,
// index 0, by name: false when there is none.
func (l *NetlinkLinks) Link(index int, name string) (linkfilter.Link, bool, error) {
	ev, there, err := l.asks.ask(index, name)
	return ev.link(), there, err
}

// askTimeout bounds one question to the kernel.
const askTimeout = 2 * time.Second

// askSocket opens a blocking NETLINK_ROUTE socket for RTM_GETLINK, its
// answers bounded by askTimeout.
func askSocket() (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return -1, fmt.Errorf("netlink request socket: %w", err)
	}
	tv := unix.NsecToTimeval(askTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("netlink request socket: %w", err)
	}
	return fd, nil
}

// linkAsker asks the kernel about one link at a time (the reader's and
// the watch loop's questions share it).
type linkAsker struct {
	mu  sync.Mutex
	fd  int // -1 once closed
	seq uint32
	buf []byte
}

func (a *linkAsker) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fd >= 0 {
		_ = unix.Close(a.fd)
		a.fd = -1
	}
}

// ask sends one RTM_GETLINK (by ifindex, or by IFLA_IFNAME when index
// is 0) and reads its answer: the link, or false when the kernel has none
// (ENODEV).
func (a *linkAsker) ask(index int, name string) (LinkEvent, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fd < 0 {
		return LinkEvent{}, false, errors.New("ask for a link: socket closed")
	}
	a.seq++
	if err := unix.Sendto(a.fd, getLinkRequest(a.seq, index, name), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return LinkEvent{}, false, fmt.Errorf("ask for link %d %q: %w", index, name, err)
	}
	if a.buf == nil {
		a.buf = make([]byte, 32<<10)
	}
	for {
		n, _, err := unix.Recvfrom(a.fd, a.buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return LinkEvent{}, false, fmt.Errorf("ask for link %d %q: %w", index, name, err)
		}
		ev, found, done, err := getLinkAnswer(a.buf[:n], a.seq)
		if done {
			return ev, found, err
		}
		// an answer to an earlier question that timed out: read on
	}
}

// getLinkRequest is an RTM_GETLINK message for one link.
func getLinkRequest(seq uint32, index int, name string) []byte {
	var attr []byte
	if index == 0 {
		value := append([]byte(name), 0)
		attr = binary.NativeEndian.AppendUint16(nil, uint16(unix.SizeofRtAttr+len(value)))
		attr = binary.NativeEndian.AppendUint16(attr, unix.IFLA_IFNAME)
		attr = append(attr, value...)
		attr = append(attr, make([]byte, rtaAlign(len(attr))-len(attr))...)
	}
	length := unix.NLMSG_HDRLEN + unix.SizeofIfInfomsg + len(attr)
	b := binary.NativeEndian.AppendUint32(nil, uint32(length))
	b = binary.NativeEndian.AppendUint16(b, unix.RTM_GETLINK)
	b = binary.NativeEndian.AppendUint16(b, unix.NLM_F_REQUEST)
	b = binary.NativeEndian.AppendUint32(b, seq)
	b = binary.NativeEndian.AppendUint32(b, 0) // the kernel fills the port in
	info := unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: int32(index)}
	b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(&info)), unix.SizeofIfInfomsg)...)
	return append(b, attr...)
}

// getLinkAnswer reads one datagram of answers: done once it holds the
// answer to question seq (the link, or none for ENODEV).
func getLinkAnswer(b []byte, seq uint32) (ev LinkEvent, found, done bool, err error) {
	for len(b) >= unix.NLMSG_HDRLEN {
		length := int(binary.NativeEndian.Uint32(b[0:4]))
		typ := binary.NativeEndian.Uint16(b[4:6])
		if length < unix.NLMSG_HDRLEN || length > len(b) {
			return LinkEvent{}, false, true, errors.New("ask for a link: malformed answer")
		}
		if binary.NativeEndian.Uint32(b[8:12]) == seq {
			body := b[unix.NLMSG_HDRLEN:length]
			switch typ {
			case unix.NLMSG_ERROR:
				if len(body) < 4 {
					return LinkEvent{}, false, true, errors.New("ask for a link: malformed error")
				}
				errno := unix.Errno(-int32(binary.NativeEndian.Uint32(body[0:4])))
				if errno == unix.ENODEV {
					return LinkEvent{}, false, true, nil
				}
				return LinkEvent{}, false, true, fmt.Errorf("ask for a link: %w", errno)
			case unix.RTM_NEWLINK:
				ev, ok := parseLink(body, false)
				if !ok {
					return LinkEvent{}, false, true, errors.New("ask for a link: malformed link")
				}
				return ev, true, true, nil
			}
		}
		next := nlmsgAlign(length)
		if next >= len(b) {
			break
		}
		b = b[next:]
	}
	return LinkEvent{}, false, false, nil
}

// kernelNamesParents says whether the running kernel tells a link's
// parent device in its messages (IFLA_PARENT_DEV_NAME, Linux 5.16).
func kernelNamesParents() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 5 || (major == 5 && minor >= 16)
}
