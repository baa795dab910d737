// Command rail-ipam is a CNI IPAM plugin that leases addresses from raild's
// pools, for main plugins from elsewhere (macvlan, sriov, ipoib, host-device).
package main

import (
	"context"
	"net"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
)

func main() {
	skel.PluginMainFuncs(skel.CNIFuncs{
		Add: cmdAdd, Del: cmdDel, Check: cmdCheck, Status: cmdStatus, GC: cmdGC,
	}, version.VersionsStartingFrom("0.4.0"), "rail-ipam: addresses from raild's pools")
}

func load(args *skel.CmdArgs) (*netconf.IPAMConf, *api.Client, error) {
	conf, err := netconf.LoadIPAM(args.StdinData)
	if err != nil {
		return nil, nil, err
	}
	return conf, api.NewClient(conf.IPAM.Socket, conf.IPAM.CallTimeout), nil
}

func attachment(args *skel.CmdArgs, conf *netconf.IPAMConf) api.AttachmentRequest {
	return api.AttachmentRequest{Sandbox: args.ContainerID, IfName: args.IfName, Network: conf.Name}
}

func cmdAdd(args *skel.CmdArgs) error {
	conf, client, err := load(args)
	if err != nil {
		return err
	}
	keys, err := netconf.ParsePodKeys(args.Args)
	if err != nil {
		return err
	}
	plan, err := client.Allocate(context.Background(), api.AllocateRequest{
		Sandbox: args.ContainerID, Netns: args.Netns, IfName: args.IfName, Network: conf.Name,
		PodNamespace: keys.Namespace, PodName: keys.Name, PodUID: keys.UID,
		Mode: api.ModeIPAM, Pool: conf.IPAM.Pool, Annotations: conf.Annotations(), CNIArgs: conf.CNIArgs(),
	})
	if err != nil {
		return netconf.CNIError("raild allocate", err)
	}
	result := &current.Result{CNIVersion: current.ImplementedSpecVersion}
	for _, iface := range plan.Interfaces {
		for _, a := range iface.Addresses {
			ipnet, err := types.ParseCIDR(a.CIDR)
			if err != nil {
				return types.NewError(types.ErrInternal, "raild planned a bad address", err.Error())
			}
			result.IPs = append(result.IPs, &current.IPConfig{Address: *ipnet, Gateway: net.ParseIP(a.Gateway)})
		}
		for _, r := range iface.Routes {
			dst, err := types.ParseCIDR(r.Dst)
			if err != nil {
				return types.NewError(types.ErrInternal, "raild planned a bad route", err.Error())
			}
			result.Routes = append(result.Routes, &types.Route{Dst: *dst, GW: net.ParseIP(r.GW)})
		}
	}
	return types.PrintResult(result, conf.CNIVersion)
}

func cmdDel(args *skel.CmdArgs) error {
	conf, client, err := load(args)
	if err != nil {
		return err
	}
	err = client.Release(context.Background(), attachment(args, conf))
	if err != nil && !api.IsCode(err, api.CodeTryAgainLater) {
		return netconf.CNIError("raild release", err)
	}
	return nil
}

func cmdCheck(args *skel.CmdArgs) error {
	conf, client, err := load(args)
	if err != nil {
		return err
	}
	if _, err := client.Check(context.Background(), attachment(args, conf)); err != nil {
		return netconf.CNIError("raild check", err)
	}
	return nil
}

func cmdStatus(args *skel.CmdArgs) error {
	conf, client, err := load(args)
	if err != nil {
		return err
	}
	st, err := client.Status(context.Background(), conf.IPAM.Pool)
	if err != nil {
		return types.NewError(api.CodeNotAvailable, "raild is not available", err.Error())
	}
	if !st.Healthy {
		return types.NewError(api.CodeNotAvailable, "raild cannot serve new pods", st.Reason)
	}
	return nil
}

func cmdGC(args *skel.CmdArgs) error {
	conf, client, err := load(args)
	if err != nil {
		return err
	}
	req := api.GCRequest{Network: conf.Name, Valid: []api.Attachment{}}
	for _, a := range conf.ValidAttachments {
		req.Valid = append(req.Valid, api.Attachment{Sandbox: a.ContainerID, IfName: a.IfName})
	}
	if _, err := client.GC(context.Background(), req); err != nil {
		return netconf.CNIError("raild gc", err)
	}
	return nil
}
