package rdma

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// InNetns reports whether the RDMA device sits in the network namespace at
// netnsPath, listing the devices on a NETLINK_RDMA socket opened in it (the
// kernel answers with the devices that netns sees: in exclusive mode, only
// its own).
func InNetns(netnsPath, device string) (bool, error) {
	ns, err := openNetns(netnsPath)
	if err != nil {
		return false, err
	}
	defer closeNetns(ns)
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_RDMA)
	if err != nil {
		if noRDMASubsystem(err) {
			return false, errors.New("this kernel has no RDMA subsystem")
		}
		return false, fmt.Errorf("open rdma netlink socket in %s: %w", describeNetns(netnsPath), err)
	}
	defer h.Close()
	_, err = findDevice(h, device)
	if errors.Is(err, ErrDeviceNotFound) {
		return false, nil
	}
	return err == nil, err
}
