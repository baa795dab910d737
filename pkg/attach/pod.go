package attach

import (
	"errors"
	"fmt"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/verbs"
)

// Links is the netlink work a Pod does in the pod's netns.
type Links interface {
	LockPod(netns string) (unlock func(), err error)
	AttachAll(netns string, specs []Spec) ([]Attached, error)
	Detach(netns string, s Spec) error
}

// Host is what a Pod reads of the node and does on it: the kernel's
// (Netlink, IsOwnNetns, rdma.SystemNetnsMode), or stand-ins in the
// plugin's table tests.
type Host struct {
	Links     Links
	OwnNetns  func(path string) (bool, error) // is path the plugin's own netns (IsOwnNetns)
	NetnsMode func() (rdma.NetnsMode, error)  // the node's RDMA netns mode (rdma.SystemNetnsMode)
}

// Netlink is the kernel's side of Links, and of the other verbs' link
// work: the package's functions as methods.
type Netlink struct{}

func (Netlink) LockPod(netns string) (func(), error) { return LockPod(netns) }
func (Netlink) AttachAll(netns string, specs []Spec) ([]Attached, error) {
	return AttachAll(netns, specs)
}
func (Netlink) Detach(netns string, s Spec) error               { return Detach(netns, s) }
func (Netlink) Check(netns string, s Spec) error                { return Check(netns, s) }
func (Netlink) Owned(netns, name string) (bool, error)          { return Owned(netns, name) }
func (Netlink) OwnedBy(netns string, o Owner) ([]string, error) { return OwnedBy(netns, o) }

// Pod is one ADD's hold on a pod's netns, opened only after the netns
// was judged (a network namespace, not the plugin's own) and the node's
// RDMA netns mode read against the attachment's mode, with the pod's lock
// held until Close: a second ADD of the pod (a runtime retrying, or
// concurrent) finds what this one did, never half of it. Every refusal is
// the CNI error for it, before anything changed.
type Pod struct {
	host   Host
	netns  string
	rdma   rdma.NetnsMode
	unlock func()
}

// Open judges netns, reads the node's RDMA netns mode against mode, and takes the
// pod's lock.
func Open(netns string, mode api.Mode, host Host) (*Pod, error) {
	if err := refuseNetns(netns, host); err != nil {
		return nil, err
	}
	netnsMode, err := host.NetnsMode()
	if err != nil {
		return nil, types.NewError(types.ErrInternal, "cannot read the RDMA netns mode", err.Error())
	}
	if err := rdma.ModeRequirement(mode, netnsMode); err != nil {
		return nil, types.NewError(types.ErrInvalidNetworkConfig, "invalid netconf field \"mode\"", err.Error())
	}
	unlock, err := host.Links.LockPod(netns)
	if err != nil {
		return nil, types.NewError(types.ErrInternal, "cannot lock the pod's netns", err.Error())
	}
	return &Pod{host: host, netns: netns, rdma: netnsMode, unlock: unlock}, nil
}

// refuseNetns refuses a netns that is missing, is not a network namespace
// (never opened: a FIFO would wait for a writer forever) or is the
// plugin's own: an attach there would take the host's NIC.
func refuseNetns(path string, host Host) error {
	if path == "" {
		return types.NewError(types.ErrInvalidEnvironmentVariables, "CNI_NETNS is empty", "ADD needs the pod's network namespace")
	}
	if err := verbs.RefuseNotNetns(path); err != nil {
		return err
	}
	own, err := host.OwnNetns(path)
	if err != nil {
		return types.NewError(types.ErrInvalidEnvironmentVariables, "cannot read CNI_NETNS", err.Error())
	}
	if own {
		return types.NewError(types.ErrInvalidEnvironmentVariables, "CNI_NETNS is the host's own network namespace",
			fmt.Sprintf("%s is the netns rail runs in: rail attaches NICs to pods, never to the host (is the pod hostNetwork?)", path))
	}
	return nil
}

// RDMANetns is the node's RDMA netns mode, as Open read it.
func (p *Pod) RDMANetns() rdma.NetnsMode { return p.rdma }

// AttachAll attaches specs in the pod's netns as one transaction (see
// the package's AttachAll).
func (p *Pod) AttachAll(specs []Spec) ([]Attached, error) {
	return p.host.Links.AttachAll(p.netns, specs)
}

// Rollback detaches what this hold created, newest first, and returns
// every failure.
func (p *Pod) Rollback(created []Spec) error {
	var errs []error
	for i := len(created) - 1; i >= 0; i-- {
		if err := p.host.Links.Detach(p.netns, created[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close releases the pod's lock.
func (p *Pod) Close() { p.unlock() }
