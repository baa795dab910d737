package main

import (
	"context"
	"fmt"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
)

// cmdCheck verifies that the interfaces, addresses and routes are as the
// lease says, and that the cached result lists them.
func cmdCheck(args *skel.CmdArgs) error {
	conf, prev, err := loadConf(args.StdinData)
	if err != nil {
		return err
	}
	if prev == nil {
		return types.NewError(types.ErrInvalidNetworkConfig, "check needs prevResult", "the runtime passes the cached ADD result as prevResult")
	}
	mode, err := rdmaMode(conf)
	if err != nil {
		return err
	}
	client := api.NewClient(conf.Socket, conf.CallTimeout)
	plan, err := client.Check(context.Background(), attachmentRequest(args, conf))
	if err != nil {
		return netconf.CNIError("raild check", err)
	}
	for _, iface := range plan.Interfaces {
		spec, err := specFor(conf, iface, mode)
		if err != nil {
			return netconf.CNIError("plan", err)
		}
		if !listed(prev, iface.Name, args.Netns) {
			return types.NewError(types.ErrInternal, "check "+iface.Name, fmt.Sprintf("%s is not in prevResult for netns %s", iface.Name, args.Netns))
		}
		if err := attach.Check(args.Netns, spec); err != nil {
			return types.NewError(types.ErrInternal, "check "+describeNIC(iface), err.Error())
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
