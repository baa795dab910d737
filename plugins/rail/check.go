package main

import (
	"context"
	"fmt"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/verbs"
)

// check verifies that the interfaces, addresses and routes are as the
// lease says, and that the cached result lists them. A pod that passed
// through has neither a lease nor a rail interface, and checks clean.
func (p *plugin) check(args *skel.CmdArgs) error {
	if err := verbs.RefuseNotNetns(args.Netns); err != nil {
		return err
	}
	conf, prev, err := netconf.Load(args.StdinData)
	if err != nil {
		return err
	}
	if prev == nil {
		return types.NewError(types.ErrInvalidNetworkConfig, "check needs prevResult", "the runtime passes the cached ADD result as prevResult")
	}
	mode, err := p.rdmaMode(conf)
	if err != nil {
		return err
	}
	plan, err := p.raild(conf.Socket, conf.CallTimeout).Check(context.Background(), attachmentRequest(args, conf))
	if api.IsCode(err, api.CodeUnknownContainer) {
		return p.checkNoLease(conf, args, prev, err)
	}
	if err != nil {
		return netconf.CNIError("raild check", err)
	}
	for _, iface := range plan.Interfaces {
		spec, _, err := specFor(conf, iface, planMode(conf, plan), mode)
		if err != nil {
			return err
		}
		if !listed(prev, iface.Name, args.Netns) {
			return types.NewError(types.ErrInternal, "check "+iface.Name, fmt.Sprintf("%s is not in prevResult for netns %s", iface.Name, args.Netns))
		}
		if err := p.links.Check(args.Netns, spec); err != nil {
			return types.NewError(types.ErrInternal, "check "+describeNIC(iface), err.Error())
		}
	}
	return nil
}

// checkNoLease: raild holds nothing for this attachment. That is right for
// a pod that passed through (no interface of rail's in it), and wrong when
// the pod still has an interface rail made.
func (p *plugin) checkNoLease(conf *netconf.Rail, args *skel.CmdArgs, prev *current.Result, noLease error) error {
	for _, spec := range specsFromPrevResult(conf, args, prev) {
		ours, err := p.links.Owned(args.Netns, spec.Name)
		if err != nil {
			return types.NewError(types.ErrInternal, "check "+spec.Name, err.Error())
		}
		if ours {
			return netconf.CNIError("raild check", noLease)
		}
	}
	return nil
}

func listed(prev *current.Result, name, netns string) bool {
	for _, iface := range prev.Interfaces {
		if iface.Name == name && iface.Sandbox == netns {
			return true
		}
	}
	return false
}
