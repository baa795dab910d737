// Package vfnetdev is vf mode's steps on a VF's netdev in the host netns,
// each with its inverse: its MAC (the netdev's own and the admin MAC its
// PF holds for it, which must agree), an InfiniBand VF's node and port
// GUIDs (set through the PF, taken only when the VF's driver binds again),
// and that rebind, which gives the VF a new netdev under its old name,
// MTU and state. pkg/attach runs the steps in its session and pushes
// their inverses on its undo list, and at DEL restores from the record in
// the netdev's alias; the settings through the PF alone are pkg/vfpf's.
package vfnetdev

import (
	"errors"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/vfpf"
)

// Links is what the steps ask of the host netns's links.
type Links interface {
	LinkByName(name string) (netlink.Link, error)
	LinkByIndex(index int) (netlink.Link, error)
	LinkSetUp(link netlink.Link) error
	LinkSetDown(link netlink.Link) error
	// SetMAC sets a link's MAC; a VF's driver may refuse it (tests model
	// one here).
	SetMAC(link netlink.Link, mac net.HardwareAddr) error
	// Change gives the link with ifindex index name (when not "") and
	// mtu (when not 0) in one request.
	Change(index int, name string, mtu int) error
}

// Node is the host side of a VF's netdev: its PF's driver, the host
// netns's links and sysfs.
type Node struct {
	PF    vfpf.Control
	Links Links
	// Root is the root of /sys ("": /), where a VF's PCI address, its
	// driver and its netdev are found.
	Root string
	// Rebind unbinds and binds the driver of the VF at a PCI address
	// (nil: through sysfs under Root); tests model the kernel's answer.
	Rebind func(pci string) error
}

// Step is one step on a VF's netdev and its inverse. Do returns the VF's
// netdev when the step replaced it (a rebind), else nil; a Do that fails
// has undone what it did.
type Step struct {
	Setting string // mac, guid
	Do      func() (netlink.Link, error)
	Undo    func() error
}

// HostState is what a VF's netdev is given back after its driver bound
// again: its name in the host, MTU and up state.
type HostState struct {
	Name string
	MTU  int
	Up   bool
}

// StateOf is the host state of link now.
func StateOf(link netlink.Link) HostState {
	attrs := link.Attrs()
	return HostState{Name: attrs.Name, MTU: attrs.MTU, Up: attrs.Flags&net.FlagUp != 0}
}

func (n Node) root() string {
	if n.Root == "" {
		return "/"
	}
	return n.Root
}

// ignoreGone is nil for the failure of a link, PF or VF that is gone.
func ignoreGone(err error) error {
	var notFound netlink.LinkNotFoundError
	if err == nil || vfpf.IsGone(err) || errors.As(err, &notFound) {
		return nil
	}
	return err
}
