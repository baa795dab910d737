package attach

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/vfnetdev"
)

// An InfiniBand VF's netdev is an IPoIB netdev of its RDMA device, and
// the kernel re-creates a device's IPoIB netdevs in the host netns
// whenever the device changes netns (exclusive RDMA netns mode). So its
// RDMA device moves into the pod before the netdev (which is then found
// anew by the VF's PCI address), and back after it; on the way back the
// netdev is made anew in the host once more, without rail's label, and
// the GUID restore finds it by the PCI address too.

// ibVFMovesRDMA reports whether s is an InfiniBand VF (one given a GUID)
// whose RDMA device moves with it.
func ibVFMovesRDMA(s Spec) bool {
	return s.Mode == ModeVF && s.VF != nil && s.VF.GUID != nil && s.movesRDMADevice()
}

// moveIBVFRDMA moves the RDMA device of the InfiniBand VF of s into the
// pod, its inverse pushed on undo, and returns the device's name (as sysfs
// names it now: a rebind may have numbered it anew) and the VF's netdev
// the kernel made anew in the host, given hostLink's name, MTU and state.
func (a attacher) moveIBVFRDMA(sess *session, s Spec, hostLink netlink.Link, undo *undoList) (string, netlink.Link, error) {
	pci, err := vfnetdev.PCIAddress(a.root(), s.VF.PF, s.VF.Index)
	if err != nil {
		return "", nil, err
	}
	dev := vfnetdev.RDMADevice(a.root(), pci, s.RDMADevice)
	want, node := vfnetdev.StateOf(hostLink), a.vfNode(sess)
	if err := a.moveRDMA(dev, "", sess.podPath); err != nil {
		return "", nil, fmt.Errorf("move rdma device %s of InfiniBand VF %s into the pod: %w", dev, pci, err)
	}
	undo.push("rdma device "+dev, func() error {
		if err := a.moveRDMA(dev, sess.podPath, ""); err != nil {
			return err
		}
		_, err := node.Adopt(pci, want)
		return err
	})
	link, err := node.Adopt(pci, want)
	if err != nil {
		return "", nil, fmt.Errorf("find InfiniBand VF %s's netdev after its rdma device %s moved: %w", pci, dev, err)
	}
	return dev, link, nil
}

// moveIBVFRDMABack returns an InfiniBand VF's RDMA device to the host
// after its netdev left the pod (rec is the netdev's label). A device
// already gone from the pod is no error.
func (a attacher) moveIBVFRDMABack(sess *session, rec aliasRecord) error {
	if rec.RDMA == "" || rec.VF == nil || !rec.VF.hasGUIDs() {
		return nil
	}
	err := a.moveRDMA(rec.RDMA, sess.podPath, "")
	if err != nil && !errors.Is(err, rdma.ErrDeviceNotFound) {
		return fmt.Errorf("move rdma device %s back to the host: %w", rec.RDMA, err)
	}
	return nil
}

// detachIBVF returns an InfiniBand VF from the pod: its PF-side settings
// reset, its netdev out (labelled), then its RDMA device (which makes the
// netdev anew in the host), then its GUIDs set back with a rebind, the
// new netdev given its host name, MTU and state. When the reset fails the
// VF still leaves the pod, labelled, for the next try (a moved RDMA
// device's return re-creates the netdev without the label).
func (a attacher) detachIBVF(sess *session, link netlink.Link, rec aliasRecord) error {
	if err := a.resetVF(sess, rec.VF); err != nil {
		return errors.Join(err, moveOutOfPodLabelled(sess, link, rec), a.moveIBVFRDMABack(sess, rec))
	}
	if err := moveOutOfPodLabelled(sess, link, rec); err != nil {
		return err
	}
	if err := a.moveIBVFRDMABack(sess, rec); err != nil {
		return err
	}
	return a.finishVFInHost(sess, rec)
}
