package attach

import (
	"errors"
	"fmt"
	"net"

	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/vfnetdev"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// detachMove returns a moved netdev to the host as it was. sess.pod is nil
// when the pod netns is gone: the kernel then already pushed the device
// back to the host netns under its pod name, and it is found there by its
// alias.
func (a attacher) detachMove(sess *session, s Spec) error {
	if sess.pod == nil {
		return a.restoreInHost(sess, s)
	}
	link, rec, found, err := findOwnedLink(sess, s)
	if err != nil {
		return err
	}
	if !found {
		// Not in the pod (never attached, or returned to the host earlier):
		// restore it there if it still carries rail's alias.
		return errors.Join(removeSourceRules(sess.podNL, s.Table), a.restoreInHost(sess, s))
	}
	errs := []error{removeSourceRules(sess.podNL, tableOf(rec, s)), removeAddresses(sess.podNL, link, s)}
	if rec.VF != nil && rec.VF.hasGUIDs() {
		return errors.Join(append(errs, a.detachIBVF(sess, link, rec))...)
	}
	if dev := rdmaDeviceOf(rec, s); dev != "" {
		err := a.moveRDMA(dev, sess.podPath, "")
		if err != nil && !errors.Is(err, rdma.ErrDeviceNotFound) {
			// The netdev still goes back: a pod must not keep the NIC.
			errs = append(errs, fmt.Errorf("move rdma device %s back to the host: %w", dev, err))
		}
	}
	if rec.VF != nil {
		// The PF-side settings are reset before the VF leaves the pod; when
		// that fails the VF goes back still labelled, and the next Detach
		// (or raild) resets it from the label.
		if err := a.resetVF(sess, rec.VF); err != nil {
			errs = append(errs, err)
			return errors.Join(append(errs, moveOutOfPodLabelled(sess, link, rec))...)
		}
	}
	if rec.VF == nil {
		return errors.Join(append(errs, moveOutOfPod(sess, link, rec))...)
	}
	// A VF leaves labelled, and loses the label only once its MACs are
	// restored in the host: a failure leaves what the next try needs.
	if err := moveOutOfPodLabelled(sess, link, rec); err != nil {
		return errors.Join(append(errs, err)...)
	}
	return errors.Join(append(errs, a.finishVFInHost(sess, rec))...)
}

// finishVFInHost restores the MACs of a VF back in the host under its
// host name, then clears its label; an InfiniBand VF gets its GUIDs back,
// and the rebind that takes them gives it a new, unlabelled netdev.
func (a attacher) finishVFInHost(sess *session, rec aliasRecord) error {
	node := a.vfNode(sess)
	if err := node.RestoreMAC(rec.VF.place(), rec.VF.MACs, rec.Host); err != nil {
		return err
	}
	if rec.VF.hasGUIDs() {
		// The rebind replaces the netdev: the new one has no label.
		return node.RestoreGUIDs(rec.VF.place(), rec.VF.GUIDs, vfnetdev.HostState{Name: rec.Host, MTU: rec.MTU, Up: rec.Up})
	}
	link, err := sess.hostNL.LinkByName(rec.Host)
	if err != nil {
		return ignoreGone(err)
	}
	if err := ignoreGone(sess.hostNL.LinkSetAlias(link, "")); err != nil {
		return fmt.Errorf("clear the label of VF netdev %s: %w", rec.Host, err)
	}
	return nil
}

// restoreInHost finds, in the host netns, a device that carries rail's
// move alias for s.Parent and gives it back its host name, MTU and state.
// A device already restored (no alias) or gone is not an error.
func (a attacher) restoreInHost(sess *session, s Spec) error {
	links, err := sess.hostNL.LinkList()
	if err != nil {
		return fmt.Errorf("list host links: %w", err)
	}
	for _, l := range links {
		rec, ok := parseAlias(l.Attrs().Alias)
		if !ok || !rec.belongsTo(s) {
			continue
		}
		return a.restoreHostLink(sess, l, rec)
	}
	return nil
}

// restoreHostLink gives a device returned to the host its host name, MTU
// and state, a VF first its PF-side settings (when that fails it keeps its
// label, for the next try).
func (a attacher) restoreHostLink(sess *session, link netlink.Link, rec aliasRecord) error {
	if rec.VF != nil {
		if err := a.resetVF(sess, rec.VF); err != nil {
			return err
		}
	}
	name := link.Attrs().Name
	change := linkChange{Index: link.Attrs().Index, NetnsFd: -1, Alias: stringPtr(""), MTU: rec.MTU}
	if rec.VF != nil {
		change.Alias = nil // cleared once its MACs are restored
	}
	if name != rec.Host {
		change.Name = rec.Host
		if link.Attrs().Flags&net.FlagUp != 0 {
			// The kernel renames only devices that are down.
			if err := sess.hostNL.LinkSetDown(link); err != nil {
				return fmt.Errorf("set %s down to rename it to %s: %w", name, rec.Host, err)
			}
		}
	}
	sock, err := openRouteSocket(netns.None())
	if err != nil {
		return err
	}
	defer sock.close()
	if err := sock.changeLink(change); err != nil {
		return fmt.Errorf("restore host netdev %s (now %s): %w", rec.Host, name, err)
	}
	if rec.VF != nil {
		if err := a.finishVFInHost(sess, rec); err != nil {
			return err
		}
	}
	return restoreUpState(sess, rec)
}

// rdmaDeviceOf names the RDMA device that went into the pod with the
// netdev: recorded in the alias, or, for an alias without it, the spec's.
func rdmaDeviceOf(rec aliasRecord, s Spec) string {
	if rec.RDMA != "" {
		return rec.RDMA
	}
	if s.movesRDMADevice() {
		return s.RDMADevice
	}
	return ""
}

// tableOf is the interface's policy routing table: the spec's, or the one
// recorded in the alias for a spec rebuilt without it.
func tableOf(rec aliasRecord, s Spec) int {
	if s.Table > 0 {
		return s.Table
	}
	return rec.Table
}

// findOwnedLink finds the pod link that rail created or moved for s: by
// name first, then by alias (the pod may have renamed it).
func findOwnedLink(sess *session, s Spec) (netlink.Link, aliasRecord, bool, error) {
	link, err := sess.podNL.LinkByName(s.Name)
	if err == nil {
		if rec, ok := parseAlias(link.Attrs().Alias); ok && rec.belongsTo(s) {
			return link, rec, true, nil
		}
	} else if ignoreGone(err) != nil {
		return nil, aliasRecord{}, false, fmt.Errorf("find %s in pod: %w", s.Name, err)
	}
	links, err := sess.podNL.LinkList()
	if err != nil {
		return nil, aliasRecord{}, false, fmt.Errorf("list pod links: %w", err)
	}
	for _, l := range links {
		if rec, ok := parseAlias(l.Attrs().Alias); ok && rec.belongsTo(s) {
			return l, rec, true, nil
		}
	}
	return nil, aliasRecord{}, false, nil
}
