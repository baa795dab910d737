package vfnetdev

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/vfpf"
)

// A VF takes GUIDs set through its PF only when its driver binds again
// (mlx5), and the rebind replaces its netdev: a new ifindex and, until
// renamed, the kernel's (or udev's) name for it, without rail's label.
// The VF is found again by its PCI address and given back the name, MTU
// and up state it had.

// netdevWait bounds the wait for a rebound VF's netdev to appear.
const netdevWait = 5 * time.Second

// PCIAddress is the PCI address of VF index of the PF whose netdev is pf:
// the target of the PF's virtfn<index> link in sysfs under root.
func PCIAddress(root, pf string, index int) (string, error) {
	link := filepath.Join(root, "sys/class/net", pf, "device", fmt.Sprintf("virtfn%d", index))
	target, err := os.Readlink(link)
	if err != nil {
		return "", fmt.Errorf("find the PCI address of VF %d of PF %s: %w", index, pf, err)
	}
	return filepath.Base(target), nil
}

// RebindDriver unbinds the VF at pci from its driver and binds it again
// through sysfs under root, as the kernel needs for a VF to take new GUIDs.
func RebindDriver(root, pci string) error {
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

// netdevName is the name of the netdev of the VF at pci, from sysfs
// under root, waiting up to netdevWait for the driver to make it.
func netdevName(root, pci string) (string, error) {
	dir := filepath.Join(root, "sys/bus/pci/devices", pci, "net")
	deadline := time.Now().Add(netdevWait)
	for {
		entries, err := os.ReadDir(dir)
		if err == nil && len(entries) > 0 {
			return entries[0].Name(), nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("read the netdev of VF %s: %w", pci, err)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("VF %s has no netdev %s after its driver was bound again", pci, netdevWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// RebindVF rebinds the driver of vf and gives its new netdev, in the host
// netns, the name, MTU and up state want says; it returns that netdev.
func (n Node) RebindVF(vf vfpf.VF, want HostState) (netlink.Link, error) {
	root := n.root()
	pci, err := PCIAddress(root, vf.PF, vf.Index)
	if err != nil {
		return nil, err
	}
	rebind := n.Rebind
	if rebind == nil {
		rebind = func(pci string) error { return RebindDriver(root, pci) }
	}
	if err := rebind(pci); err != nil {
		return nil, err
	}
	return n.Adopt(pci, want)
}

// Adopt finds the netdev the kernel made anew for the VF at pci (after a
// rebind, or after its RDMA device changed netns) in the host netns, and
// gives it the name, MTU and up state want says.
func (n Node) Adopt(pci string, want HostState) (netlink.Link, error) {
	name, err := netdevName(n.root(), pci)
	if err != nil {
		return nil, err
	}
	link, err := n.Links.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("find VF %s's new netdev %s in the host netns: %w", pci, name, err)
	}
	rename := ""
	if name != want.Name {
		rename = want.Name
		if link.Attrs().Flags&net.FlagUp != 0 {
			if err := n.Links.LinkSetDown(link); err != nil {
				return nil, fmt.Errorf("set %s down to rename it to %s: %w", name, want.Name, err)
			}
		}
	}
	if err := n.Links.Change(link.Attrs().Index, rename, want.MTU); err != nil {
		return nil, fmt.Errorf("give VF %s's new netdev %s its name %s and MTU %d: %w", pci, name, want.Name, want.MTU, err)
	}
	if link, err = n.Links.LinkByIndex(link.Attrs().Index); err != nil {
		return nil, fmt.Errorf("find VF netdev %s after the rebind: %w", want.Name, err)
	}
	if want.Up {
		if err := n.Links.LinkSetUp(link); err != nil {
			return nil, fmt.Errorf("set VF netdev %s up: %w", want.Name, err)
		}
	}
	return link, nil
}

// RDMADevice is the RDMA device of the VF at pci now (a rebind may number
// it anew), from sysfs under root; known when sysfs names none.
func RDMADevice(root, pci, known string) string {
	entries, err := os.ReadDir(filepath.Join(root, "sys/bus/pci/devices", pci, "infiniband"))
	if err != nil || len(entries) == 0 {
		return known
	}
	return entries[0].Name()
}
