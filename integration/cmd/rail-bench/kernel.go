package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/integration/harness"
)

// Names of the kernel floor's veth pair, in a netns of its own.
const (
	kernelLink = namePrefix + "kf0"
	kernelPeer = namePrefix + "kf1"
)

// kernelSide is the kernel floor: a veth end moved into a pod netns (ADD)
// and back (DEL), one RTM_NEWLINK with IFLA_NET_NS_FD each way and
// nothing else: no exec, no address, no raild. It has one slot.
type kernelSide struct {
	host, pod     *harness.NetNS
	hostFd, podFd netns.NsHandle // the namespaces, to move the link into
	hostH, podH   *netlink.Handle
	link          netlink.Link
}

// newKernelSide creates two namespaces (named after the run, but not as
// the node's pods are) and the veth pair in the first. On error nothing
// is left.
func newKernelSide(runID string) (_ *kernelSide, retErr error) {
	k := &kernelSide{hostFd: netns.None(), podFd: netns.None()}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, k.close())
		}
	}()
	var err error
	if k.host, err = harness.CreateNetNS(namePrefix + "kf-" + runID + "-host"); err != nil {
		return nil, err
	}
	if k.pod, err = harness.CreateNetNS(namePrefix + "kf-" + runID + "-pod"); err != nil {
		return nil, err
	}
	if err := k.open(); err != nil {
		return nil, err
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: kernelLink}, PeerName: kernelPeer}
	if err := k.hostH.LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("kernel floor: create veth %s: %w", kernelLink, err)
	}
	if k.link, err = k.hostH.LinkByName(kernelLink); err != nil {
		return nil, fmt.Errorf("kernel floor: find %s: %w", kernelLink, err)
	}
	return k, nil
}

// open opens each namespace and a netlink handle in it.
func (k *kernelSide) open() error {
	var err error
	if k.hostFd, err = k.host.Handle(); err != nil {
		return err
	}
	if k.podFd, err = k.pod.Handle(); err != nil {
		return err
	}
	if k.hostH, err = k.host.Netlink(); err != nil {
		return err
	}
	k.podH, err = k.pod.Netlink()
	return err
}

func (k *kernelSide) capacity() int { return 1 }

func (k *kernelSide) tidy(int) error { return nil }

func (k *kernelSide) add(context.Context, int) error {
	if err := k.hostH.LinkSetNsFd(k.link, int(k.podFd)); err != nil {
		return fmt.Errorf("kernel floor: move %s into %s: %w", kernelLink, k.pod.Name, err)
	}
	return nil
}

func (k *kernelSide) del(context.Context, int) error {
	if err := k.podH.LinkSetNsFd(k.link, int(k.hostFd)); err != nil {
		return fmt.Errorf("kernel floor: move %s back (ifindex %d kept?): %w", kernelLink, k.link.Attrs().Index, err)
	}
	return nil
}

// leftover says what is not as it was created: the link back home.
func (k *kernelSide) leftover() []string {
	if _, err := k.hostH.LinkByName(kernelLink); err != nil {
		return []string{fmt.Sprintf("kernel floor: %s is not back in %s: %v", kernelLink, k.host.Name, err)}
	}
	return nil
}

// close deletes both namespaces (and so the veth pair).
func (k *kernelSide) close() error {
	var errs []error
	for _, h := range []*netlink.Handle{k.hostH, k.podH} {
		if h != nil {
			h.Close()
		}
	}
	for _, fd := range []netns.NsHandle{k.hostFd, k.podFd} {
		if fd.IsOpen() {
			errs = append(errs, fd.Close())
		}
	}
	for _, ns := range []*harness.NetNS{k.pod, k.host} {
		if ns != nil {
			errs = append(errs, ns.Delete())
		}
	}
	return errors.Join(errs...)
}
