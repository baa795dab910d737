package rdma

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/topology"
)

// SoftRoCEName is the name of the Soft-RoCE device (rxe) rail creates on
// the pod interface podIf of sandbox on a node in softRoCE mode: the
// prefix that marks it as rail's (topology.PodSoftRoCEPrefix) and 8 hex
// digits of a hash of the two (15 characters in all: UCX cuts longer
// names), so that DEL, the undo of a failed ADD and raild's sweep find it
// again from the lease alone, and two pods of the node never share a name
// (a hash collision, about 1 in 10^5 for 300 pod interfaces on a node,
// fails the second create and with it that ADD, which the kubelet retries
// with a new sandbox).
func SoftRoCEName(sandbox, podIf string) string {
	sum := sha256.Sum256([]byte(sandbox + "\x00" + podIf))
	return topology.PodSoftRoCEPrefix + hex.EncodeToString(sum[:topology.PodSoftRoCEHexDigits/2])
}

// AddSoftRoCE creates the rxe name on netdev inside the netns at netnsPath
// (RDMA netlink RDMA_NLDEV_CMD_NEWLINK on a socket opened in that netns,
// where the kernel looks the netdev up), like `rdma link add NAME type rxe
// netdev NETDEV` run there.
func AddSoftRoCE(netnsPath, name, netdev string) error {
	h, done, err := rdmaHandle(netnsPath)
	if err != nil {
		return fmt.Errorf("create soft-RoCE device %s on %s: %w", name, netdev, err)
	}
	defer done()
	if err := h.RdmaLinkAdd(name, "rxe", netdev); err != nil {
		return fmt.Errorf("create soft-RoCE device %s on %s in %s: %w%s", name, netdev, describeNetns(netnsPath), err, rxeHint(err))
	}
	return nil
}

// DeleteSoftRoCE deletes the rxe name as seen from the netns at
// netnsPath; one that is gone (its netdev or its netns went, which takes
// the rxe with it), or a kernel without RDMA, is no error.
func DeleteSoftRoCE(netnsPath, name string) error {
	h, done, err := rdmaHandle(netnsPath)
	if errors.Is(err, errNoRDMA) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete soft-RoCE device %s: %w", name, err)
	}
	defer done()
	link, err := findDevice(h, name)
	if errors.Is(err, ErrDeviceNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete soft-RoCE device %s: %w", name, err)
	}
	if err := h.RdmaLinkDel(link.Attrs.Name); err != nil && !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("delete soft-RoCE device %s: %w", name, err)
	}
	return nil
}

// PodSoftRoCEDevices lists the rxe devices rail made in pods (by their
// name's prefix) that the netns at netnsPath sees: in shared netns mode
// every netns sees them all.
func PodSoftRoCEDevices(netnsPath string) ([]string, error) {
	h, done, err := rdmaHandle(netnsPath)
	if err != nil {
		return nil, err
	}
	defer done()
	links, err := h.RdmaLinkList()
	if err != nil {
		return nil, fmt.Errorf("list rdma devices: %w", err)
	}
	var out []string
	for _, l := range links {
		if topology.IsPodSoftRoCE(l.Attrs.Name) {
			out = append(out, l.Attrs.Name)
		}
	}
	return out, nil
}

// errNoRDMA is a kernel without RDMA netlink.
var errNoRDMA = errors.New("this kernel has no RDMA subsystem")

// IsNoRDMA reports whether err says the kernel has no RDMA subsystem.
func IsNoRDMA(err error) bool { return errors.Is(err, errNoRDMA) }

// rdmaHandle opens an RDMA netlink socket in the netns at path ("": the
// caller's).
func rdmaHandle(path string) (*netlink.Handle, func(), error) {
	ns, err := openNetns(path)
	if err != nil {
		return nil, nil, err
	}
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_RDMA)
	closeNetns(ns)
	if err != nil {
		if noRDMASubsystem(err) {
			return nil, nil, errNoRDMA
		}
		return nil, nil, fmt.Errorf("open rdma netlink socket in %s: %w", describeNetns(path), err)
	}
	return h, h.Close, nil
}

// rxeHint explains the kernel's answers to an rxe NEWLINK.
func rxeHint(err error) string {
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOENT):
		return " (this kernel has no Soft-RoCE link type: load the rdma_rxe module)"
	case errors.Is(err, unix.EEXIST):
		return " (an RDMA device of that name, or an rxe on that netdev, exists already)"
	case errors.Is(err, unix.ENODEV):
		return " (the netdev is not in that netns)"
	}
	return ""
}
