package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/integration/harness"
)

// Names of the kernel floors' links, each floor in two namespaces of its
// own.
const (
	kernelLink    = namePrefix + "kf0" // the move floor's veth end
	kernelPeer    = namePrefix + "kf1"
	macvlanParent = namePrefix + "mf0" // the macvlan floor's parent (a veth end, as the stand-in NICs are)
	macvlanPeer   = namePrefix + "mf1"
	macvlanChild  = "net1" // as rail and upstream macvlan name it in the pod
)

// kernelFloors are the kernel's own work for each attach mode, with no
// exec, no address and no raild: the move floor (a netdev into a pod's
// netns and back, one RTM_NEWLINK with IFLA_NET_NS_FD each way) and the
// macvlan floor (a macvlan child created straight into the pod's netns,
// then looked up and deleted there: the netlink calls rail makes).
type kernelFloors struct {
	move    *moveFloor
	macvlan *macvlanFloor
}

// newKernelFloors creates both floors (named after the run, but not as
// the node's pods are). On error nothing is left.
func newKernelFloors(runID string) (_ *kernelFloors, retErr error) {
	k := &kernelFloors{}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, k.close())
		}
	}()
	var err error
	if k.move, err = newMoveFloor(runID); err != nil {
		return nil, err
	}
	k.macvlan, err = newMacvlanFloor(runID)
	return k, err
}

// leftover says what either floor did not leave as it was created.
func (k *kernelFloors) leftover() []string {
	return append(k.move.leftover(), k.macvlan.leftover()...)
}

func (k *kernelFloors) close() error {
	var errs []error
	if k.move != nil {
		errs = append(errs, k.move.close())
	}
	if k.macvlan != nil {
		errs = append(errs, k.macvlan.close())
	}
	return errors.Join(errs...)
}

// floorNetns are a floor's host and pod namespaces, each open with a
// netlink handle in it. A floor has one slot and nothing to tidy.
type floorNetns struct {
	host, pod     *harness.NetNS
	hostFd, podFd netns.NsHandle // the namespaces, to create or move links into
	hostH, podH   *netlink.Handle
}

// openFloorNetns creates prefix-host and prefix-pod and opens them.
func openFloorNetns(prefix string) (_ *floorNetns, retErr error) {
	f := &floorNetns{hostFd: netns.None(), podFd: netns.None()}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, f.close())
		}
	}()
	var err error
	if f.host, err = harness.CreateNetNS(prefix + "-host"); err != nil {
		return nil, err
	}
	if f.pod, err = harness.CreateNetNS(prefix + "-pod"); err != nil {
		return nil, err
	}
	if f.hostFd, err = f.host.Handle(); err != nil {
		return nil, err
	}
	if f.podFd, err = f.pod.Handle(); err != nil {
		return nil, err
	}
	if f.hostH, err = f.host.Netlink(); err != nil {
		return nil, err
	}
	f.podH, err = f.pod.Netlink()
	return f, err
}

func (f *floorNetns) capacity() int { return 1 }

func (f *floorNetns) tidy(int) error { return nil }

// close deletes both namespaces (and so every link in them).
func (f *floorNetns) close() error {
	var errs []error
	for _, h := range []*netlink.Handle{f.hostH, f.podH} {
		if h != nil {
			h.Close()
		}
	}
	for _, fd := range []netns.NsHandle{f.hostFd, f.podFd} {
		if fd.IsOpen() {
			errs = append(errs, fd.Close())
		}
	}
	for _, ns := range []*harness.NetNS{f.pod, f.host} {
		if ns != nil {
			errs = append(errs, ns.Delete())
		}
	}
	return errors.Join(errs...)
}

// addVethPair creates name and peer in the floor's host netns and returns
// name's link.
func (f *floorNetns) addVethPair(what, name, peer string) (netlink.Link, error) {
	if err := f.hostH.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer}); err != nil {
		return nil, fmt.Errorf("%s: create veth %s: %w", what, name, err)
	}
	link, err := f.hostH.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: find %s: %w", what, name, err)
	}
	return link, nil
}

// moveFloor moves a veth end into the pod netns (ADD) and back (DEL).
type moveFloor struct {
	*floorNetns
	link netlink.Link
}

func newMoveFloor(runID string) (*moveFloor, error) {
	ns, err := openFloorNetns(namePrefix + "kf-" + runID)
	if err != nil {
		return nil, err
	}
	m := &moveFloor{floorNetns: ns}
	if m.link, err = ns.addVethPair("kernel floor", kernelLink, kernelPeer); err != nil {
		return nil, errors.Join(err, ns.close())
	}
	return m, nil
}

func (m *moveFloor) add(context.Context, int) error {
	if err := m.hostH.LinkSetNsFd(m.link, int(m.podFd)); err != nil {
		return fmt.Errorf("kernel floor: move %s into %s: %w", kernelLink, m.pod.Name, err)
	}
	return nil
}

func (m *moveFloor) del(context.Context, int) error {
	if err := m.podH.LinkSetNsFd(m.link, int(m.hostFd)); err != nil {
		return fmt.Errorf("kernel floor: move %s back (ifindex %d kept?): %w", kernelLink, m.link.Attrs().Index, err)
	}
	return nil
}

// leftover says what is not as it was created: the link back home.
func (m *moveFloor) leftover() []string {
	if _, err := m.hostH.LinkByName(kernelLink); err != nil {
		return []string{fmt.Sprintf("kernel floor: %s is not back in %s: %v", kernelLink, m.host.Name, err)}
	}
	return nil
}

// macvlanFloor creates a macvlan child of a veth end straight into the
// pod netns (ADD), then finds and deletes it there (DEL).
type macvlanFloor struct {
	*floorNetns
	parent netlink.Link
}

func newMacvlanFloor(runID string) (*macvlanFloor, error) {
	ns, err := openFloorNetns(namePrefix + "mf-" + runID)
	if err != nil {
		return nil, err
	}
	m := &macvlanFloor{floorNetns: ns}
	if m.parent, err = ns.addVethPair("macvlan floor", macvlanParent, macvlanPeer); err == nil {
		if err = ns.hostH.LinkSetUp(m.parent); err != nil {
			err = fmt.Errorf("macvlan floor: set %s up: %w", macvlanParent, err)
		}
	}
	if err != nil {
		return nil, errors.Join(err, ns.close())
	}
	return m, nil
}

func (m *macvlanFloor) add(context.Context, int) error {
	attrs := netlink.NewLinkAttrs()
	attrs.Name, attrs.ParentIndex, attrs.Namespace = macvlanChild, m.parent.Attrs().Index, netlink.NsFd(int(m.podFd))
	if err := m.hostH.LinkAdd(&netlink.Macvlan{LinkAttrs: attrs, Mode: netlink.MACVLAN_MODE_BRIDGE}); err != nil {
		return fmt.Errorf("macvlan floor: create %s on %s in %s: %w", macvlanChild, macvlanParent, m.pod.Name, err)
	}
	return nil
}

func (m *macvlanFloor) del(context.Context, int) error {
	link, err := m.podH.LinkByName(macvlanChild)
	if err != nil {
		return fmt.Errorf("macvlan floor: find %s in %s: %w", macvlanChild, m.pod.Name, err)
	}
	if err := m.podH.LinkDel(link); err != nil {
		return fmt.Errorf("macvlan floor: delete %s: %w", macvlanChild, err)
	}
	return nil
}

// leftover says what is not as it was created: no child in the pod, the
// parent in its place.
func (m *macvlanFloor) leftover() []string {
	var out []string
	if _, err := m.podH.LinkByName(macvlanChild); err == nil {
		out = append(out, fmt.Sprintf("macvlan floor: %s left in %s", macvlanChild, m.pod.Name))
	}
	if _, err := m.hostH.LinkByName(macvlanParent); err != nil {
		out = append(out, fmt.Sprintf("macvlan floor: %s gone from %s: %v", macvlanParent, m.host.Name, err))
	}
	return out
}
