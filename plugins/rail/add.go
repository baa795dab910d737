package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/verbs"
)

// add asks raild for a plan and carries it out. In chained mode a pod that
// raild's attach policy leaves out (or that opts out itself) passes
// through: the previous result comes back as is and nothing is recorded.
func (p *plugin) add(args *skel.CmdArgs) error {
	in, err := netconf.LoadAdd(args)
	if err != nil {
		return err
	}
	conf, keys, ask := in.Conf, in.Keys, in.Ask
	chained := conf.PrevResult != nil
	if chained && ask == api.AskNo {
		return p.printPrevious(conf)
	}
	// The pod's netns judged, the RDMA netns mode read and the pod locked
	// from raild's answer to the end of a rollback: a second ADD of the
	// attachment (a runtime retrying, or concurrent) finds what the first
	// did, never half of it.
	pod, err := attach.Open(args.Netns, conf.Mode, p.host())
	if err != nil {
		return err
	}
	defer pod.Close()
	raild := p.raild(conf.Socket, conf.CallTimeout)
	plan, err := raild.Allocate(context.Background(), in.Request)
	switch {
	case err == nil && plan.PassThrough:
		return p.printPrevious(conf)
	case err == nil:
		return p.attachPlan(args, conf, in.Prev, plan, pod, raild)
	case chained && ask != api.AskYes && conf.OnRaildDown == netconf.RaildDownPassThrough && api.IsUnreachable(err):
		p.logf("pod %s/%s starts without RDMA (onRaildDown: %s): %v", keys.Namespace, keys.Name, conf.OnRaildDown, err)
		return p.printPrevious(conf)
	}
	return netconf.CNIError("raild allocate", err)
}

// attachPlan attaches every planned interface as one transaction and
// prints the merged result. When anything fails, what this call made is
// undone: the interfaces it created (pkg/attach undoes its own part when
// attaching fails), then the leases, only when raild made them for this
// call — a repeated ADD's leases belong to the ADD that made them, and the
// pod that holds them keeps them. A rollback that fails is reported with
// the error.
func (p *plugin) attachPlan(args *skel.CmdArgs, conf *netconf.Rail, prev *current.Result, plan *api.Plan,
	pod *attach.Pod, raild verbs.Raild) (retErr error) {
	var created []attach.Spec
	release := plan.Fresh
	defer func() {
		if retErr != nil {
			retErr = verbs.WithRollback(retErr, rollback(args, conf, pod, created, release, raild))
		}
	}()
	if err := nameConflict(conf, prev, plan); err != nil {
		return err
	}
	ifaces, err := plannedInterfaces(args, conf, plan, pod.RDMANetns())
	if err != nil {
		return err
	}
	specs := make([]attach.Spec, len(ifaces))
	for i, pi := range ifaces {
		specs[i] = pi.spec
	}
	got, err := pod.AttachAll(specs)
	if errors.Is(err, attach.ErrUndoIncomplete) {
		// Something of this call may still hold a planned address: the
		// lease stays for the runtime's DEL, which removes both.
		release = false
	}
	if err != nil {
		return types.NewError(types.ErrInternal, "attach "+describePlan(plan), err.Error())
	}
	out := make([]verbs.Interface, len(ifaces))
	for i, pi := range ifaces {
		if got[i].Created {
			created = append(created, pi.spec)
		}
		out[i] = verbs.Interface{Name: got[i].Name, MAC: got[i].MAC, MTU: got[i].MTU, Addressing: pi.addressing}
		if pi.iface.NIC != nil {
			out[i].PCI = pi.iface.NIC.PCI
		}
	}
	return verbs.PrintResult(p.stdout, prev, args.Netns, out, conf.CNIVersion)
}

// rollback undoes a failed ADD's own work, newest first: it detaches the
// interfaces this call created, then releases the leases when release
// says they are this call's and every detach worked (an address still on
// a pod interface must stay leased).
func rollback(args *skel.CmdArgs, conf *netconf.Rail, pod *attach.Pod, created []attach.Spec, release bool, raild verbs.Raild) error {
	err := pod.Rollback(created)
	errs := []error{err}
	if release && err == nil {
		if err := raild.Release(context.Background(), attachmentRequest(args, conf)); err != nil {
			errs = append(errs, fmt.Errorf("release the leases: %w", err))
		}
	}
	return errors.Join(errs...)
}

// ownerOf names the lease an interface belongs to, recorded on the link so
// that `raild leases --recover` can rebuild a lost lease store from pods.
func ownerOf(args *skel.CmdArgs, conf *netconf.Rail, iface api.PlanInterface) attach.Owner {
	o := attach.Owner{Sandbox: args.ContainerID, CNIIfName: args.IfName, Network: conf.Name, Pool: iface.Pool}
	if iface.NIC != nil {
		o.NIC = iface.NIC.RDMADevice
		if iface.NIC.Port > 1 {
			o.NICPort = strconv.Itoa(iface.NIC.Port)
		}
	}
	return o
}

// nameConflict refuses a plan whose interface names the previous result
// already holds: two rail networks chained with one ifPrefix.
func nameConflict(conf *netconf.Rail, prev *current.Result, plan *api.Plan) error {
	if prev == nil {
		return nil
	}
	for _, iface := range plan.Interfaces {
		for _, have := range prev.Interfaces {
			if have.Name == iface.Name && have.Sandbox != "" {
				return types.NewError(types.ErrInvalidNetworkConfig, "invalid netconf field \"ifPrefix\"",
					fmt.Sprintf("the pod already has %s from an earlier plugin of the chain; give network %q its own ifPrefix", iface.Name, conf.Name))
			}
		}
	}
	return nil
}

// printPrevious answers a pass-through: the previous result as the runtime
// gave it, or an empty result when there is none.
func (p *plugin) printPrevious(conf *netconf.Rail) error {
	if conf.PrevResult != nil {
		return p.print(conf.PrevResult, conf.CNIVersion)
	}
	return p.print(&current.Result{CNIVersion: current.ImplementedSpecVersion}, conf.CNIVersion)
}
