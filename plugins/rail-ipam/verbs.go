package main

import (
	"context"
	"fmt"

	"github.com/containernetworking/cni/pkg/skel"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/verbs"
)

func attachment(args *skel.CmdArgs, conf *netconf.IPAMConf) api.AttachmentRequest {
	return api.AttachmentRequest{Sandbox: args.ContainerID, CNIIfName: args.IfName, Network: conf.Name}
}

// add leases the attachment's address and reports it. When the answer
// cannot be given, a lease raild made for this call is released; a
// repeated ADD's lease belongs to the ADD that made it and stays.
func (p *plugin) add(args *skel.CmdArgs) (retErr error) {
	if err := verbs.RefuseNotNetns(args.Netns); err != nil {
		return err
	}
	conf, raild, err := p.load(args.StdinData)
	if err != nil {
		return err
	}
	keys, err := netconf.ParsePodKeys(args.Args)
	if err != nil {
		return err
	}
	ctx := context.Background()
	plan, err := raild.Allocate(ctx, api.AllocateRequest{
		Sandbox: args.ContainerID, Netns: args.Netns, CNIIfName: args.IfName, Network: conf.Name,
		PodNamespace: keys.Namespace, PodName: keys.Name, PodUID: keys.UID,
		Mode: api.ModeIPAM, Pool: conf.IPAM.Pool, Annotations: conf.Annotations(), CNIArgs: conf.CNIArgs(),
	})
	if err != nil {
		return netconf.CNIError("raild allocate", err)
	}
	defer func() {
		if retErr != nil && plan.Fresh {
			if err := raild.Release(ctx, attachment(args, conf)); err != nil {
				retErr = verbs.WithRollback(retErr, fmt.Errorf("release the lease: %w", err))
			}
		}
	}()
	result := &current.Result{CNIVersion: current.ImplementedSpecVersion}
	for _, iface := range plan.Interfaces {
		addressing, err := verbs.Parse(iface)
		if err != nil {
			return err
		}
		addressing.AddTo(result, nil)
	}
	return p.print(result, conf.CNIVersion)
}

// del releases the attachment's lease. An unknown attachment is not an
// error, nor is a raild that cannot be reached (code 11): its reconcile
// releases what the runtime no longer lists.
func (p *plugin) del(args *skel.CmdArgs) error {
	conf, raild, err := p.load(args.StdinData)
	if err != nil {
		return err
	}
	err = raild.Release(context.Background(), attachment(args, conf))
	if err != nil && !api.IsCode(err, api.CodeTryAgainLater) {
		return netconf.CNIError("raild release", err)
	}
	return nil
}

// check verifies that raild still holds the attachment's lease.
func (p *plugin) check(args *skel.CmdArgs) error {
	if err := verbs.RefuseNotNetns(args.Netns); err != nil {
		return err
	}
	conf, raild, err := p.load(args.StdinData)
	if err != nil {
		return err
	}
	if _, err := raild.Check(context.Background(), attachment(args, conf)); err != nil {
		return netconf.CNIError("raild check", err)
	}
	return nil
}

// status fails with code 50 when raild cannot serve an ADD from the pool.
func (p *plugin) status(args *skel.CmdArgs) error {
	conf, raild, err := p.load(args.StdinData)
	if err != nil {
		return err
	}
	return verbs.Status(context.Background(), raild, conf.IPAM.Pool, false)
}

// gc hands the runtime's valid attachments of this network to raild.
func (p *plugin) gc(args *skel.CmdArgs) error {
	conf, raild, err := p.load(args.StdinData)
	if err != nil {
		return err
	}
	return verbs.GC(context.Background(), raild, conf.Name, conf.ValidAttachments)
}
