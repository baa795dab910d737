package rdma

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// RoCEv2Port is the UDP port RoCE v2 runs on (IANA 4791; 12B7 in
// /proc/net/udp's hex).
const RoCEv2Port = 4791

// CheckSoftRoCE says whether this kernel can give pods Soft-RoCE devices
// that carry traffic, as softRoCE mode needs, and if not names the kernel
// and what it lacks. mode is the RDMA subsystem's netns mode
// (SystemNetnsMode). It tries what softRoCE mode does, in a throwaway
// netns of its own: an rxe on a veth there, whose RoCE v2 socket must then
// listen in that netns. Kernels whose rxe has no network namespace support
// (Debian 12's 6.1, 13's 6.12) create the rxe but keep its socket in the
// host's netns, where a pod's packets never arrive.
func CheckSoftRoCE(mode NetnsMode) error {
	kernel := "Linux " + KernelRelease()
	switch mode {
	case NetnsNone:
		return fmt.Errorf("softRoCE: kernel %s has no RDMA subsystem (ib_core): softRoCE needs the modules ib_core, ib_uverbs, rdma_ucm and rdma_rxe", kernel)
	case NetnsExclusive:
		return fmt.Errorf("softRoCE: kernel %s runs the RDMA subsystem in exclusive netns mode: softRoCE needs shared mode, where raild reads a pod's rxe from the host's sysfs "+
			"(`rdma system set netns shared` before any pod exists, or ib_core's netns_mode=1 at boot)", kernel)
	}
	err := probeRxeInNetns()
	var missing *rxeMissing
	if errors.As(err, &missing) {
		return fmt.Errorf("softRoCE: kernel %s %s", kernel, missing.what)
	}
	if err != nil {
		return fmt.Errorf("softRoCE: kernel %s: cannot try an rxe in a network namespace: %w", kernel, err)
	}
	return nil
}

// rxeMissing is what the kernel lacks for softRoCE mode.
type rxeMissing struct{ what string }

func (m *rxeMissing) Error() string { return m.what }

// probeRxeInNetns makes a throwaway netns with a veth pair, an rxe on one
// end, and looks for the rxe's RoCE v2 socket there; the netns, and with
// it everything made in it, goes when it returns.
func probeRxeInNetns() (retErr error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return fmt.Errorf("open own netns: %w", err)
	}
	defer orig.Close()
	scratch, err := netns.New() // the thread is in it from here on
	if err != nil {
		return fmt.Errorf("create a netns: %w", err)
	}
	defer func() {
		if err := netns.Set(orig); err != nil {
			runtime.LockOSThread() // never reuse a thread left in the scratch netns
			retErr = errors.Join(retErr, fmt.Errorf("return to own netns: %w", err))
		}
		_ = scratch.Close()
	}()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "railprobe0"}, PeerName: "railprobe1"}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("create a veth pair: %w", err)
	}
	for _, name := range []string{"railprobe0", "railprobe1"} {
		l, err := netlink.LinkByName(name)
		if err == nil {
			err = netlink.LinkSetUp(l)
		}
		if err != nil {
			return fmt.Errorf("set %s up: %w", name, err)
		}
	}
	h, err := netlink.NewHandleAt(scratch, unix.NETLINK_RDMA)
	if err != nil {
		if noRDMASubsystem(err) {
			return &rxeMissing{"has no RDMA subsystem (ib_core)"}
		}
		return fmt.Errorf("open rdma netlink socket: %w", err)
	}
	defer h.Close()
	if err := h.RdmaLinkAdd("railprobe_rxe", "rxe", "railprobe0"); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) {
			return &rxeMissing{fmt.Sprintf("cannot create a Soft-RoCE device (%v): load the rdma_rxe module, or use a kernel built with CONFIG_RDMA_RXE", err)}
		}
		return fmt.Errorf("create an rxe on a veth: %w", err)
	}
	defer func() { _ = h.RdmaLinkDel("railprobe_rxe") }()
	listening, err := udpListening(RoCEv2Port)
	if err != nil {
		return err
	}
	if !listening {
		return &rxeMissing{fmt.Sprintf("creates an rxe in a network namespace but its RoCE v2 socket (UDP %d) is not in that netns: "+
			"this rdma_rxe has no network namespace support, so a pod's rxe would never receive; use a kernel whose rxe has it (the VM rig's 7.3 does)", RoCEv2Port)}
	}
	return nil
}

// udpListening reports whether a UDP socket of this thread's netns is
// bound to port (IPv4 or IPv6), from /proc/thread-self/net/udp{,6}.
func udpListening(port int) (bool, error) {
	for _, file := range []string{"/proc/thread-self/net/udp", "/proc/thread-self/net/udp6"} {
		f, err := os.Open(file)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			return false, err
		}
		found, err := udpTableHasPort(f, port)
		f.Close()
		if err != nil || found {
			return found, err
		}
	}
	return false, nil
}

// udpTableHasPort reads a /proc/net/udp table for a local port: the second
// field of each socket's line is "ADDR:PORT", the port in upper-case hex.
func udpTableHasPort(r io.Reader, port int) (bool, error) {
	want := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 1 && strings.HasSuffix(fields[1], want) {
			return true, nil
		}
	}
	return false, sc.Err()
}

// KernelRelease is the running kernel's release (uname -r), or "unknown".
func KernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}
