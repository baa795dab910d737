package attach

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// attachMove moves the host netdev s.Parent into the pod as s.Name and
// configures it; on failure everything is undone.
func (a attacher) attachMove(sess *session, s Spec) (_ Result, retErr error) {
	var undo undoList
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, undo.run())
		}
	}()
	hostLink, err := a.findHostNetdev(sess, s)
	if err != nil {
		return Result{}, err
	}
	if s.Mode == ModeVF {
		// The VF is its PF's VF <index>; its netdev's host name is what it
		// is called now (a plan made while it sat in the host under a dead
		// pod's name names that one).
		s.Parent = hostLink.Attrs().Name
	}
	rec := originalState(hostLink, s)
	rec.Table = s.Table
	if s.movesRDMADevice() {
		rec.RDMA = s.RDMADevice
	}
	if s.Mode == ModeVF {
		var rebound netlink.Link
		if rec.VF, rebound, err = a.configureVF(sess, hostLink, s, &undo); err != nil {
			return Result{}, err
		}
		if rebound != nil {
			// A new netdev after a rebind: held by its ifindex (udev may
			// still rename it).
			hostLink, err = sess.hostNL.LinkByIndex(rebound.Attrs().Index)
		} else {
			hostLink, err = sess.hostNL.LinkByName(hostLink.Attrs().Name)
		}
		if err != nil {
			return Result{}, fmt.Errorf("look up VF netdev %s again: %w", s.Parent, err)
		}
	}
	if ibVFMovesRDMA(s) {
		if rec.RDMA, hostLink, err = a.moveIBVFRDMA(sess, s, hostLink, &undo); err != nil {
			return Result{}, err
		}
	}
	if err := moveIntoPod(sess, hostLink, s, rec, &undo); err != nil {
		return Result{}, err
	}
	podLink, err := sess.podNL.LinkByName(s.Name)
	if err != nil {
		return Result{}, fmt.Errorf("find %s in pod after the move: %w", s.Name, err)
	}
	if s.movesRDMADevice() && !ibVFMovesRDMA(s) {
		if err := a.moveRDMA(s.RDMADevice, "", sess.podPath); err != nil {
			return Result{}, fmt.Errorf("move rdma device %s with %s: %w", s.RDMADevice, s.Parent, err)
		}
		undo.push("rdma device "+s.RDMADevice, func() error { return a.moveRDMA(s.RDMADevice, sess.podPath, "") })
	}
	if err := configureInterface(sess, podLink, s, &undo); err != nil {
		return Result{}, err
	}
	return resultOf(sess, s.Name)
}

// findHostNetdev finds s.Parent in the host netns: by name, or, when the
// kernel returned it from a dead pod under its pod name and no Detach has
// restored it yet, by its rail alias. A VF returned that way is reset and
// restored first: it still carries the settings of the pod it left.
func (a attacher) findHostNetdev(sess *session, s Spec) (netlink.Link, error) {
	if s.Parent == "" && s.Mode == ModeVF {
		return nil, fmt.Errorf("VF %d of PF %s has no netdev in the host netns (bound to vfio-pci or to no driver, or in another netns): "+
			"vf mode needs a VF bound to its network driver", s.VF.Index, s.VF.PF)
	}
	link, err := sess.hostNL.LinkByName(s.Parent)
	if err != nil && ignoreGone(err) != nil {
		return nil, fmt.Errorf("look up host netdev %s: %w", s.Parent, err)
	}
	if err != nil {
		links, listErr := sess.hostNL.LinkList()
		if listErr != nil {
			return nil, fmt.Errorf("list host links: %w", listErr)
		}
		for _, l := range links {
			if rec, ok := parseAlias(l.Attrs().Alias); ok && rec.Kind == "" && rec.Host == s.Parent {
				link, err = l, nil
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("host netdev %s not found in the host netns: %w", s.Parent, err)
	}
	if rec, ok := parseAlias(link.Attrs().Alias); ok && rec.VF != nil {
		if err := a.restoreHostLink(sess, link, rec); err != nil {
			return nil, fmt.Errorf("VF netdev %s came back from a pod that is gone and could not be reset: %w", s.Parent, err)
		}
		if link, err = sess.hostNL.LinkByName(rec.Host); err != nil {
			return nil, fmt.Errorf("look up host netdev %s after resetting it: %w", rec.Host, err)
		}
	}
	return link, nil
}

// originalState is what Detach restores. A device that still carries a
// rail alias in the host (returned by the kernel, never detached) keeps the
// state recorded when it first left the host.
func originalState(hostLink netlink.Link, s Spec) aliasRecord {
	attrs := hostLink.Attrs()
	rec := aliasRecord{Host: s.Parent, Name: s.Name, MTU: attrs.MTU, Up: attrs.Flags&net.FlagUp != 0, Owner: s.Owner}
	if old, ok := parseAlias(attrs.Alias); ok && old.Kind == "" && old.Host == s.Parent {
		rec.MTU, rec.Up = old.MTU, old.Up
	}
	return rec
}

// moveIntoPod moves, renames, labels and sizes the host link in one
// message sent in the host netns. The kernel applies such a message step
// by step, so when it fails half-way the device is searched in the pod and
// put back.
func moveIntoPod(sess *session, hostLink netlink.Link, s Spec, rec aliasRecord, undo *undoList) error {
	sock, err := openRouteSocket(netns.None())
	if err != nil {
		return err
	}
	defer sock.close()
	change := linkChange{
		Index:   hostLink.Attrs().Index,
		NetnsFd: int(sess.pod.Fd()),
		Name:    s.Name,
		Alias:   stringPtr(rec.String()),
		MTU:     s.MTU,
	}
	if err := sock.changeLink(change); err != nil {
		moveErr := fmt.Errorf("move %s into pod netns %s as %s: %w", s.Parent, sess.podPath, s.Name, err)
		return errors.Join(moveErr, recoverPartialMove(sess, hostLink, rec))
	}
	undo.push("move of "+s.Parent+" into the pod", func() error {
		podLink, err := sess.podNL.LinkByName(s.Name)
		if err != nil {
			return fmt.Errorf("find %s in pod: %w", s.Name, err)
		}
		return moveOutOfPod(sess, podLink, rec)
	})
	return nil
}

// recoverPartialMove looks for the device in the pod after a failed move
// message (it can be there under its host name, or under its pod name
// without the rest of the change) and moves it back.
func recoverPartialMove(sess *session, hostLink netlink.Link, rec aliasRecord) error {
	links, err := sess.podNL.LinkList()
	if err != nil {
		return fmt.Errorf("look for %s in pod after a failed move: %w", rec.Host, err)
	}
	mac := hostLink.Attrs().HardwareAddr.String()
	for _, l := range links {
		attrs := l.Attrs()
		if attrs.Alias == rec.String() || (attrs.HardwareAddr.String() == mac &&
			(attrs.Name == rec.Host || attrs.Index == hostLink.Attrs().Index)) {
			return moveOutOfPod(sess, l, rec)
		}
	}
	return nil
}

// moveOutOfPod sends podLink back to the host netns under its host name,
// clears the alias and restores the MTU in one message sent in the pod
// netns, then restores the up state in the host.
func moveOutOfPod(sess *session, podLink netlink.Link, rec aliasRecord) error {
	return moveOut(sess, podLink, rec, "")
}

// moveOutOfPodLabelled is moveOutOfPod for a VF whose PF-side settings
// could not be reset: it keeps its alias, which says what to reset.
func moveOutOfPodLabelled(sess *session, podLink netlink.Link, rec aliasRecord) error {
	return moveOut(sess, podLink, rec, rec.String())
}

func moveOut(sess *session, podLink netlink.Link, rec aliasRecord, alias string) error {
	sock, err := openRouteSocket(sess.podHandle())
	if err != nil {
		return err
	}
	defer sock.close()
	change := linkChange{
		Index:   podLink.Attrs().Index,
		NetnsFd: int(sess.host.Fd()),
		Name:    rec.Host,
		Alias:   stringPtr(alias),
		MTU:     rec.MTU,
	}
	if err := sock.changeLink(change); err != nil {
		return fmt.Errorf("move %s back to the host netns as %s: %w (if it reached the host under another name, "+
			"it keeps its rail alias and the next detach restores it)", podLink.Attrs().Name, rec.Host, err)
	}
	return restoreUpState(sess, rec)
}

func restoreUpState(sess *session, rec aliasRecord) error {
	if !rec.Up {
		return nil
	}
	link, err := sess.hostNL.LinkByName(rec.Host)
	if err != nil {
		return fmt.Errorf("find %s in the host netns: %w", rec.Host, err)
	}
	if err := sess.hostNL.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up in the host netns: %w", rec.Host, err)
	}
	return nil
}
