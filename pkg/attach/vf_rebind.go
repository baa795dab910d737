package attach

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// A VF takes GUIDs set through its PF only when its driver binds again
// (mlx5), and the rebind replaces its netdev: a new ifindex and, until
// renamed, the kernel's (or udev's) name for it, without rail's label.
// The VF is found again by its PCI address and given back the name, MTU
// and up state it had.

// vfNetdevWait bounds the wait for a rebound VF's netdev to appear.
const vfNetdevWait = 5 * time.Second

// vfPCIAddress is the PCI address of VF index of the PF whose netdev is
// pf: the target of the PF's virtfn<index> link in sysfs under root.
func vfPCIAddress(root, pf string, index int) (string, error) {
	link := filepath.Join(root, "sys/class/net", pf, "device", fmt.Sprintf("virtfn%d", index))
	target, err := os.Readlink(link)
	if err != nil {
		return "", fmt.Errorf("find the PCI address of VF %d of PF %s: %w", index, pf, err)
	}
	return filepath.Base(target), nil
}

// rebindVFDriver unbinds the VF at pci from its driver and binds it again
// through sysfs under root, as the kernel needs for a VF to take new GUIDs.
func rebindVFDriver(root, pci string) error {
	dev := filepath.Join(root, "sys/bus/pci/devices", pci)
	driver, err := os.Readlink(filepath.Join(dev, "driver"))
	if err != nil {
		return fmt.Errorf("VF %s has no driver to rebind (%w): bind it to its network driver (mlx5_core)", pci, err)
	}
	name := filepath.Base(driver)
	if err := os.WriteFile(filepath.Join(dev, "driver", "unbind"), []byte(pci), 0); err != nil {
		return fmt.Errorf("unbind VF %s from %s: %w", pci, name, err)
	}
	if err := os.WriteFile(filepath.Join(root, "sys/bus/pci/drivers", name, "bind"), []byte(pci), 0); err != nil {
		return fmt.Errorf("bind VF %s to %s again: %w (it has no driver now: echo %s > /sys/bus/pci/drivers/%s/bind)", pci, name, err, pci, name)
	}
	return nil
}

// vfNetdevName is the name of the netdev of the VF at pci, from sysfs
// under root, waiting up to vfNetdevWait for the driver to make it.
func vfNetdevName(root, pci string) (string, error) {
	dir := filepath.Join(root, "sys/bus/pci/devices", pci, "net")
	deadline := time.Now().Add(vfNetdevWait)
	for {
		entries, err := os.ReadDir(dir)
		if err == nil && len(entries) > 0 {
			return entries[0].Name(), nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("read the netdev of VF %s: %w", pci, err)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("VF %s has no netdev %s after its driver was bound again", pci, vfNetdevWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hostState is what a VF's netdev is given back after a rebind.
type hostState struct {
	Name string
	MTU  int
	Up   bool
}

// rebindVF rebinds the driver of VF index of PF pf and gives its new
// netdev, in the host netns, the name, MTU and up state want says; it
// returns that netdev.
func (a attacher) rebindVF(sess *session, pf string, index int, want hostState) (netlink.Link, error) {
	root := a.root()
	pci, err := vfPCIAddress(root, pf, index)
	if err != nil {
		return nil, err
	}
	rebind := a.rebind
	if rebind == nil {
		rebind = func(pci string) error { return rebindVFDriver(root, pci) }
	}
	if err := rebind(pci); err != nil {
		return nil, err
	}
	return a.adoptVFNetdev(sess, pci, want)
}

// adoptVFNetdev finds the netdev the kernel made anew for the VF at pci
// (after a rebind, or after its RDMA device changed netns) in the host
// netns, and gives it the name, MTU and up state want says.
func (a attacher) adoptVFNetdev(sess *session, pci string, want hostState) (netlink.Link, error) {
	name, err := vfNetdevName(a.root(), pci)
	if err != nil {
		return nil, err
	}
	link, err := sess.hostNL.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("find VF %s's new netdev %s in the host netns: %w", pci, name, err)
	}
	change := linkChange{Index: link.Attrs().Index, NetnsFd: -1, MTU: want.MTU}
	if name != want.Name {
		change.Name = want.Name
		if link.Attrs().Flags&net.FlagUp != 0 {
			if err := sess.hostNL.LinkSetDown(link); err != nil {
				return nil, fmt.Errorf("set %s down to rename it to %s: %w", name, want.Name, err)
			}
		}
	}
	sock, err := openRouteSocket(netns.None())
	if err != nil {
		return nil, err
	}
	defer sock.close()
	if err := sock.changeLink(change); err != nil {
		return nil, fmt.Errorf("give VF %s's new netdev %s its name %s and MTU %d: %w", pci, name, want.Name, want.MTU, err)
	}
	if link, err = sess.hostNL.LinkByIndex(link.Attrs().Index); err != nil {
		return nil, fmt.Errorf("find VF netdev %s after the rebind: %w", want.Name, err)
	}
	if want.Up {
		if err := sess.hostNL.LinkSetUp(link); err != nil {
			return nil, fmt.Errorf("set VF netdev %s up: %w", want.Name, err)
		}
	}
	return link, nil
}

// vfRDMADevice is the RDMA device of the VF at pci now (a rebind may
// number it anew), from sysfs under root; known when sysfs names none.
func vfRDMADevice(root, pci, known string) string {
	entries, err := os.ReadDir(filepath.Join(root, "sys/bus/pci/devices", pci, "infiniband"))
	if err != nil || len(entries) == 0 {
		return known
	}
	return entries[0].Name()
}

func (a attacher) root() string {
	if a.sysRoot == "" {
		return "/"
	}
	return a.sysRoot
}
