package attach

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"

	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/vfpf"
	"github.com/vishvananda/netlink"
)

// Attached is what AttachAll did for one Spec.
type Attached struct {
	Result
	// Created is true when this call made the interface; false when the
	// pod already had it as the Spec asks (a repeated ADD), which this call
	// then left as it was and never undoes.
	Created bool
}

// AttachAll gives the pod whose network namespace is at podNetns every
// interface specs describe, in order, as one transaction in one session of
// the two namespaces; the host netns is the caller's. When interface k
// fails, the interfaces 0..k-1 this call created are undone, newest first,
// and host and pod are as they were; the error then joins the failure and
// any step of the undo that failed. Every Spec is validated, and their
// names must differ, before anything changes.
//
// AttachAll is re-entrant: an interface the pod already has as rail's for
// its Spec, matching it (see Check), is returned as is (Created false);
// one that exists but differs fails, and the caller should Detach first.
func AttachAll(podNetns string, specs []Spec) ([]Attached, error) {
	return defaultAttacher().attachAll(podNetns, specs)
}

// Detach undoes AttachAll for one Spec: a moved netdev returns to the host under its
// original name with its original MTU and up/down state (and its RDMA
// device, in exclusive mode), even when it was renamed inside the pod or the
// kernel already pushed it back because the pod netns died; a child link
// is deleted; source rules are removed. A pod netns that is gone or empty,
// a link that is gone, or a second call all return nil.
//
// Detach needs only Name. An empty Mode is read from the alias rail wrote
// on the link (a stale netconf must not decide what is undone), and a pod
// link without rail's alias is then left alone; without
// Parent (a Spec rebuilt from a
// cached CNI result) the interface is found by the pod name recorded in its
// alias, and the alias supplies the host name, MTU, state and RDMA device;
// without Table and Addresses, source rules are found by the addresses
// still on the interface.
func Detach(podNetns string, s Spec) error {
	return defaultAttacher().detach(podNetns, s)
}

// Check verifies that the pod interface of s is present, rail's, up, and
// has the MTU, addresses, routes, rules and ARP settings s lists. The error
// says what differs.
func Check(podNetns string, s Spec) error {
	if err := validate(s); err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sess, err := openSession(podNetns)
	if err != nil {
		return fmt.Errorf("check %s: %w", s.Name, err)
	}
	defer sess.close()
	if err := checkSession(sess, s); err != nil {
		return fmt.Errorf("check %s: %w", s.Name, err)
	}
	return nil
}

// attacher carries the dependencies tests replace, which need hardware:
// moving RDMA devices, and a PF's VF settings.
type attacher struct {
	moveRDMA func(dev, fromNetns, toNetns string) error
	// pf gives the PF control of a session (nil: netlink in its host netns).
	pf func(*session) vfpf.Control
	// setMAC sets a host link's MAC (nil: netlink); tests model a VF
	// driver's answer with it.
	setMAC func(netlink.Link, net.HardwareAddr) error
	// sysRoot is the root of /sys ("": /), where a VF's PCI address, its
	// driver and its netdev are found.
	sysRoot string
	// rebind unbinds and binds the driver of the VF at a PCI address (nil:
	// through sysfs under sysRoot); tests model the kernel's answer.
	rebind func(pci string) error
	// soft makes and deletes the pods' Soft-RoCE devices.
	soft SoftRoCEOps
}

func defaultAttacher() attacher {
	return attacher{moveRDMA: rdma.MoveDevice, soft: rdmaSoftRoCE()}
}

func (a attacher) pfControl(sess *session) vfpf.Control {
	if a.pf != nil {
		return a.pf(sess)
	}
	if sess.pfIndex == nil {
		sess.pfIndex = map[string]int{}
	}
	return netlinkPF{h: sess.hostNL, index: sess.pfIndex}
}

func (a attacher) attachAll(podNetns string, specs []Spec) (_ []Attached, retErr error) {
	if err := validateAll(specs); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sess, err := openSession(podNetns)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", specNames(specs), err)
	}
	defer sess.close()
	var undo undoList
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, undo.run())
		}
	}()
	out := make([]Attached, 0, len(specs))
	for _, s := range specs {
		got, err := a.attachOne(sess, s)
		if err != nil {
			return nil, err
		}
		if got.Created {
			undo.push("interface "+s.Name, func() error { return a.detachIn(sess, s) })
		}
		out = append(out, got)
	}
	return out, nil
}

// attachOne attaches s in an open session, or finds it attached, with its
// Soft-RoCE device when s names one.
func (a attacher) attachOne(sess *session, s Spec) (Attached, error) {
	got, err := a.attachLink(sess, s)
	if err != nil {
		return got, err
	}
	return a.withSoftRoCE(sess, s, got)
}

// attachLink attaches the interface of s, or finds it attached.
func (a attacher) attachLink(sess *session, s Spec) (Attached, error) {
	if existing, err := sess.podNL.LinkByName(s.Name); err == nil {
		res, err := reattach(sess, existing, s)
		return Attached{Result: res}, err
	} else if ignoreGone(err) != nil {
		return Attached{}, fmt.Errorf("attach %s: look up %s in pod: %w", s.Name, s.Name, err)
	}
	var res Result
	var err error
	if movesNetdev(s.Mode) {
		res, err = a.attachMove(sess, s)
	} else {
		res, err = a.attachChild(sess, s)
	}
	if err != nil {
		return Attached{}, fmt.Errorf("attach %s (%s of %s): %w", s.Name, s.Mode, s.Parent, err)
	}
	return Attached{Result: res, Created: true}, nil
}

// reattach handles an Attach for a name the pod already has.
func reattach(sess *session, existing netlink.Link, s Spec) (Result, error) {
	if rec, ok := parseAlias(existing.Attrs().Alias); !ok || !rec.belongsTo(s) {
		return Result{}, fmt.Errorf("attach %s: pod netns %s already has an interface named %s: pick another name",
			s.Name, sess.podPath, s.Name)
	}
	if err := checkSession(sess, s); err != nil {
		return Result{}, fmt.Errorf("attach %s: already attached but not as requested (%w): detach it first", s.Name, err)
	}
	return resultOf(sess, s.Name)
}

func (a attacher) detach(podNetns string, s Spec) error {
	if err := validateDetach(s); err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sess, err := openSession(podNetns)
	if errors.Is(err, errPodNetnsGone) {
		sess, err = openHostSession(podNetns)
	}
	if err != nil {
		return fmt.Errorf("detach %s: %w", s.Name, err)
	}
	defer sess.close()
	if s.Mode == "" {
		var ours bool
		if s.Mode, ours = modeOnLink(sess, s.Name); !ours {
			return nil
		}
	}
	return a.detachIn(sess, s)
}

// detachIn undoes s in an open session: its Soft-RoCE device first, then
// its interface.
func (a attacher) detachIn(sess *session, s Spec) error {
	err := a.removeSoftRoCE(sess, s)
	if err != nil {
		return fmt.Errorf("detach %s (%s of %s): %w", s.Name, s.Mode, s.Parent, err)
	}
	if movesNetdev(s.Mode) {
		err = a.detachMove(sess, s)
	} else {
		err = a.detachChild(sess, s)
	}
	if err != nil {
		return fmt.Errorf("detach %s (%s of %s): %w", s.Name, s.Mode, s.Parent, err)
	}
	return nil
}

// specNames lists the pod names of specs, for messages.
func specNames(specs []Spec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// resultOf reads back the pod interface name.
func resultOf(sess *session, name string) (Result, error) {
	link, err := sess.podNL.LinkByName(name)
	if err != nil {
		return Result{}, fmt.Errorf("read back %s in pod: %w", name, err)
	}
	attrs := link.Attrs()
	return Result{Name: attrs.Name, MAC: attrs.HardwareAddr.String(), MTU: attrs.MTU, Index: attrs.Index}, nil
}

// Owned reports whether the pod has an interface called name that rail
// made (it carries rail's alias). A pod netns that is gone has none.
func Owned(podNetns, name string) (bool, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sess, err := openSession(podNetns)
	if errors.Is(err, errPodNetnsGone) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up %s: %w", name, err)
	}
	defer sess.close()
	link, err := sess.podNL.LinkByName(name)
	if err != nil {
		return false, ignoreGone(err)
	}
	_, ours := parseAlias(link.Attrs().Alias)
	return ours, nil
}
