package attach

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
)

// attachChild creates a macvlan, ipvlan or IPoIB child of s.Parent directly in the
// pod netns (one RTM_NEWLINK carrying IFLA_NET_NS_FD: the parent is looked
// up in the host, the name only has to be free in the pod, so no temporary
// name and no second move are needed), labels it and configures it.
func (a attacher) attachChild(sess *session, s Spec) (_ Result, retErr error) {
	var undo undoList
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, undo.run())
		}
	}()
	parent, err := sess.hostNL.LinkByName(s.Parent)
	if err != nil {
		return Result{}, fmt.Errorf("parent netdev %s not found in the host netns: %w", s.Parent, err)
	}
	if s.MTU > parent.Attrs().MTU {
		return Result{}, fmt.Errorf("MTU %d is above the MTU %d of parent %s: a %s child cannot exceed its parent; lower MTU or raise the parent's",
			s.MTU, parent.Attrs().MTU, s.Parent, s.Mode)
	}
	if err := createChild(sess, parent, s); err != nil {
		return Result{}, err
	}
	child, err := sess.podNL.LinkByName(s.Name)
	if err != nil {
		return Result{}, fmt.Errorf("find new %s child %s in pod: %w", s.Mode, s.Name, err)
	}
	undo.push(string(s.Mode)+" child "+s.Name, func() error { return ignoreGone(sess.podNL.LinkDel(child)) })
	rec := aliasRecord{Host: s.Parent, Name: s.Name, Kind: string(s.Mode), Table: s.Table, Owner: s.Owner}
	if err := sess.podNL.LinkSetAlias(child, rec.String()); err != nil {
		return Result{}, fmt.Errorf("label %s with its alias: %w", s.Name, err)
	}
	if err := configureInterface(sess, child, s, &undo); err != nil {
		return Result{}, err
	}
	return resultOf(sess, s.Name)
}

func createChild(sess *session, parent netlink.Link, s Spec) error {
	switch s.Mode {
	case ModeMacvlan:
		return createMacvlan(sess, parent, s)
	case ModeIPVLAN:
		return createIPVLAN(sess, parent, s)
	case ModeIPoIB:
		return createIPoIB(sess, parent, s)
	default:
		return fmt.Errorf("mode %q has no child link", s.Mode)
	}
}

// detachChild deletes the child rail made for s. A pod netns that is gone
// took the child with it; a child that is gone is fine too.
func (a attacher) detachChild(sess *session, s Spec) error {
	if sess.pod == nil {
		return nil
	}
	link, rec, found, err := findOwnedLink(sess, s)
	if err != nil {
		return err
	}
	if !found {
		return removeSourceRules(sess.podNL, s.Table)
	}
	errs := []error{removeSourceRules(sess.podNL, tableOf(rec, s))}
	if err := ignoreGone(sess.podNL.LinkDel(link)); err != nil {
		errs = append(errs, fmt.Errorf("delete %s child %s: %w", s.Mode, link.Attrs().Name, err))
	}
	return errors.Join(errs...)
}
