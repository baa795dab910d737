package main

import (
	"context"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
)

// cmdStatus fails with code 50 when raild cannot serve an ADD.
func cmdStatus(args *skel.CmdArgs) error {
	conf, err := netconf.LoadRail(args.StdinData)
	if err != nil {
		return err
	}
	return status(conf.Socket, conf.Pool, conf.CallTimeout)
}

func status(socket, pool string, timeout time.Duration) error {
	client := api.NewClient(socket, timeout)
	st, err := client.Status(context.Background(), pool)
	if err != nil {
		return types.NewError(api.CodeNotAvailable, "raild is not available", err.Error())
	}
	if !st.Healthy {
		return types.NewError(api.CodeNotAvailable, "raild cannot serve new pods", st.Reason)
	}
	return nil
}

// cmdGC hands the runtime's valid attachments of this network to raild.
func cmdGC(args *skel.CmdArgs) error {
	conf, err := netconf.LoadRail(args.StdinData)
	if err != nil {
		return err
	}
	req := api.GCRequest{Network: conf.Name, Valid: []api.Attachment{}}
	for _, a := range conf.ValidAttachments {
		req.Valid = append(req.Valid, api.Attachment{Sandbox: a.ContainerID, IfName: a.IfName})
	}
	client := api.NewClient(conf.Socket, conf.CallTimeout)
	if _, err := client.GC(context.Background(), req); err != nil {
		return netconf.CNIError("raild gc", err)
	}
	return nil
}
