// Package rdma reads and acts on the RDMA subsystem's network namespace
// mode, and moves RDMA devices between network namespaces.
//
// The RDMA subsystem (ib_core) has two netns modes:
//
//   - shared: every RDMA device is visible in every netns. Child netdevs
//     (macvlan for RoCE, IPoIB children) in pods can use the parent's RDMA
//     device. A moved netdev also works, but its RDMA device stays visible
//     to the host and to every other pod.
//   - exclusive: an RDMA device lives in exactly one netns and must be moved
//     together with its netdev ("rdma dev set <dev> netns <ns>"). Child
//     netdevs in pods cannot reach the parent's RDMA device.
//
// The package never logs; every failure is returned as a wrapped error.
package rdma

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NetnsMode is the RDMA subsystem's network namespace mode.
type NetnsMode string

const (
	// NetnsShared: RDMA devices are visible in all network namespaces.
	NetnsShared NetnsMode = "shared"
	// NetnsExclusive: each RDMA device belongs to one network namespace.
	NetnsExclusive NetnsMode = "exclusive"
	// NetnsNone: this kernel has no RDMA subsystem (ib_core not built or
	// not loaded), so there is no mode and nothing to move.
	NetnsNone NetnsMode = ""
)

// SystemNetnsMode returns the RDMA netns mode of the running kernel, as
// "rdma system show netns" would print it, asked over NETLINK_RDMA from the
// caller's network namespace.
//
// A kernel without an RDMA subsystem refuses to open a NETLINK_RDMA socket
// (EPROTONOSUPPORT): that is not an error, SystemNetnsMode returns NetnsNone
// and nil, and callers decide whether RDMA is required. A kernel with RDMA
// but older than 5.2 has no netns mode at all (the query is unknown to it);
// its devices are visible everywhere, so it is reported as NetnsShared.
func SystemNetnsMode() (NetnsMode, error) {
	h, err := netlink.NewHandleAt(netns.None(), unix.NETLINK_RDMA)
	if err != nil {
		if noRDMASubsystem(err) {
			return NetnsNone, nil
		}
		return NetnsNone, fmt.Errorf("open rdma netlink socket: %w", err)
	}
	defer h.Close()
	mode, err := h.RdmaSystemGetNetnsMode()
	if err != nil {
		if queryUnknownToKernel(err) {
			return NetnsShared, nil
		}
		return NetnsNone, fmt.Errorf("read rdma system netns mode: %w", err)
	}
	return ParseNetnsMode(mode)
}

// ParseNetnsMode turns "shared", "exclusive" or "" into a NetnsMode and
// refuses anything else.
func ParseNetnsMode(s string) (NetnsMode, error) {
	switch m := NetnsMode(s); m {
	case NetnsShared, NetnsExclusive, NetnsNone:
		return m, nil
	default:
		return NetnsNone, fmt.Errorf("unknown rdma netns mode %q: want %q or %q", s, NetnsShared, NetnsExclusive)
	}
}

// noRDMASubsystem reports whether opening a NETLINK_RDMA socket failed
// because the kernel has no RDMA netlink family.
func noRDMASubsystem(err error) bool {
	return errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.EAFNOSUPPORT)
}

// queryUnknownToKernel reports whether the kernel answered the netns-mode
// query with "not supported", which kernels before 5.2 do.
func queryUnknownToKernel(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL)
}
