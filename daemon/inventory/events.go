package inventory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/daemon/linkfilter"
)

// LinkEvent is one link change in the watched netns.
type LinkEvent struct {
	Name  string // the link's name now
	Index int    // its ifindex in the netns (0: not known)
	Gone  bool   // deleted, or moved to another netns (RTM_DELLINK)
	// Moved says a Gone link left for another netns (the kernel names
	// the netns it went to): it still exists, in a pod perhaps.
	Moved bool
	// New says the link has just arrived: registered in the netns or
	// moved into it (the kernel's ifi_change of all ones); false for a
	// change of a link that was there.
	New bool
	// State is the link's attributes that a NIC's record follows.
	State linkfilter.State
	// Lower is the link this one sits on in the same netns (a macvlan's
	// or VLAN's parent), 0 for none: such an upper device on a NIC makes
	// it the node's own.
	Lower int
	// Lost says that events were lost (the subscription's socket
	// overflowed): what changed is unknown.
	Lost bool
}

// LinkSource hands link events to handle, one at a time and from one
// goroutine, until ctx ends; Run returns then.
type LinkSource interface {
	Run(ctx context.Context, handle func(LinkEvent))
}

// subscribeBuffer is the socket buffer asked for the subscription: bursts
// of link events (a hundred pods at once) wait there, not in raild.
const subscribeBuffer = 4 << 20

// NetlinkLinks is a subscription to the link changes of one netns (state,
// rename, add, remove, moves out of it), read straight from its netlink
// socket in the goroutine that runs it: each message is parsed for the
// few attributes a LinkEvent has, in a buffer that is reused, and handed
// to the handler there — an event no NIC's costs no hand-off to another
// goroutine and no allocation beyond its name. When the socket overflows,
// a Lost event says so and reading goes on.
type NetlinkLinks struct {
	file *os.File
	conn syscall.RawConn // file's, for the filter's socket option
	// asks is a request socket in the same netns: a link by ifindex or
	// name (linkfilter.Source.Link), one question at a time.
	asks *linkAsker
}

// LinkEvents opens the subscription in ns (netns.None(): the caller's,
// the host netns for raild). Run reads it and closes it when it returns.
func LinkEvents(ns netns.NsHandle) (*NetlinkLinks, error) {
	fds, err := linkSocketsIn(ns)
	if err != nil {
		return nil, fmt.Errorf("subscribe to link events: %w", err)
	}
	// A non-blocking descriptor makes the file pollable: reads park the
	// goroutine on the runtime's poller, not a thread in recvfrom.
	file := os.NewFile(uintptr(fds[0]), "netlink-link-events")
	conn, err := file.SyscallConn()
	if err != nil {
		file.Close()
		_ = unix.Close(fds[1])
		return nil, fmt.Errorf("subscribe to link events: %w", err)
	}
	return &NetlinkLinks{file: file, conn: conn, asks: &linkAsker{fd: fds[1]}}, nil
}

// linkSocketsIn opens, in ns, a non-blocking NETLINK_ROUTE socket joined
// to the link group, with a large receive buffer (the default one when
// the netns does not allow forcing it), and a request socket beside it.
func linkSocketsIn(ns netns.NsHandle) ([2]int, error) {
	if !ns.IsOpen() {
		return linkSockets()
	}
	type result struct {
		fds [2]int
		err error
	}
	done := make(chan result, 1)
	go func() {
		// The thread enters ns for the socket call only; a thread that
		// cannot return to its netns is never unlocked, so it ends with
		// this goroutine instead of running others in the wrong netns.
		runtime.LockOSThread()
		home, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{[2]int{-1, -1}, fmt.Errorf("current netns: %w", err)}
			return
		}
		defer home.Close()
		if err := netns.Set(ns); err != nil {
			runtime.UnlockOSThread()
			done <- result{[2]int{-1, -1}, fmt.Errorf("enter netns: %w", err)}
			return
		}
		fds, err := linkSockets()
		if netns.Set(home) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{fds, err}
	}()
	r := <-done
	return r.fds, r.err
}

// linkSockets are the event socket and the request socket, in the
// calling thread's netns.
func linkSockets() ([2]int, error) {
	events, err := linkSocket()
	if err != nil {
		return [2]int{-1, -1}, err
	}
	asks, err := askSocket()
	if err != nil {
		_ = unix.Close(events)
		return [2]int{-1, -1}, err
	}
	return [2]int{events, asks}, nil
}

func linkSocket() (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_ROUTE)
	if err != nil {
		return -1, fmt.Errorf("netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: unix.RTMGRP_LINK}); err != nil {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("join the link group: %w", err)
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, subscribeBuffer) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, subscribeBuffer)
	}
	return fd, nil
}

// gatherFor is how long reading waits, once woken by an event, for the
// rest of its burst: a pod's plugins make several link changes within a
// few milliseconds, and each wake-up of raild costs more than reading the
// event. Idle, nothing waits.
const gatherFor = 20 * time.Millisecond

// Run reads events and hands each to handle until ctx ends or the socket
// fails, then closes the socket. Woken by an event, it reads every
// message waiting, waits gatherFor for the rest of the burst, reads
// those, and only then sleeps on the socket again.
func (l *NetlinkLinks) Run(ctx context.Context, handle func(LinkEvent)) {
	l.RunBatches(ctx, handle, func() {})
}

// RunBatches is Run that also calls batchEnd after each batch of events
// it read (what one wake-up found, then what the gather found).
func (l *NetlinkLinks) RunBatches(ctx context.Context, handle func(LinkEvent), batchEnd func()) {
	defer l.asks.close()
	defer l.file.Close()
	stop := context.AfterFunc(ctx, func() { _ = l.file.Close() }) // wakes the read below
	defer stop()
	conn := l.conn
	buf := make([]byte, 64<<10)
	gather := time.NewTimer(0)
	<-gather.C
	for ctx.Err() == nil {
		var failed bool
		err := conn.Read(func(fd uintptr) bool {
			read, ok := drain(int(fd), buf, handle)
			failed = !ok
			return read > 0 || failed
		})
		if err != nil || failed {
			return // closed, or the socket failed
		}
		batchEnd()
		gather.Reset(gatherFor)
		select {
		case <-ctx.Done():
			return
		case <-gather.C:
		}
		// What came meanwhile, read under the file's own reference to the
		// descriptor (a close from ctx cannot slip a reused one in), and
		// never waiting: the callback says it is done whatever it read.
		var read int
		err = conn.Read(func(fd uintptr) bool {
			n, ok := drain(int(fd), buf, handle)
			read, failed = n, !ok
			return true
		})
		if err != nil || failed {
			return
		}
		if read > 0 {
			batchEnd()
		}
	}
}

// drain reads every datagram waiting on the non-blocking socket fd and
// hands on its events: how many datagrams it read, and false when the
// socket failed. An overflow (ENOBUFS) is a Lost event, and reading goes
// on.
func drain(fd int, buf []byte, handle func(LinkEvent)) (read int, ok bool) {
	for {
		n, from, err := unix.Recvfrom(fd, buf, 0)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return read, true
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOBUFS):
			read++
			handle(LinkEvent{Lost: true})
			continue
		case err != nil:
			return read, false
		}
		read++
		if sa, isNetlink := from.(*unix.SockaddrNetlink); isNetlink && sa.Pid == 0 { // only the kernel's
			eachLinkEvent(buf[:n], handle)
		}
	}
}
