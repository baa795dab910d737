package main

import (
	"context"

	"github.com/containernetworking/cni/pkg/skel"

	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/verbs"
)

// status fails with code 50 when raild cannot serve an ADD; a network whose
// pods may start without raild (onRaildDown: pass-through) stays ready
// while raild is unreachable.
func (p *plugin) status(args *skel.CmdArgs) error {
	conf, err := netconf.LoadRail(args.StdinData)
	if err != nil {
		return err
	}
	return verbs.Status(context.Background(), p.raild(conf.Socket, conf.CallTimeout), conf.Pool,
		conf.OnRaildDown == netconf.RaildDownPassThrough)
}

// gc hands the runtime's valid attachments of this network to raild.
func (p *plugin) gc(args *skel.CmdArgs) error {
	conf, err := netconf.LoadRail(args.StdinData)
	if err != nil {
		return err
	}
	return verbs.GC(context.Background(), p.raild(conf.Socket, conf.CallTimeout), conf.Name, conf.ValidAttachments)
}
