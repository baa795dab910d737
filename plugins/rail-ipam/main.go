// Command rail-ipam is a CNI IPAM plugin that leases addresses from raild's
// pools, for main plugins from elsewhere (macvlan, sriov, ipoib, host-device).
package main

import (
	"context"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/verbs"
)

func main() {
	skel.PluginMainFuncs(skel.CNIFuncs{
		Add: cmdAdd, Del: cmdDel, Check: cmdCheck, Status: cmdStatus, GC: cmdGC,
	}, version.All, "rail-ipam: addresses from raild's pools")
}

func load(args *skel.CmdArgs) (*netconf.IPAMConf, *api.Client, error) {
	conf, err := netconf.LoadIPAM(args.StdinData)
	if err != nil {
		return nil, nil, err
	}
	return conf, api.NewClient(conf.IPAM.Socket, conf.IPAM.CallTimeout), nil
}

func attachment(args *skel.CmdArgs, conf *netconf.IPAMConf) api.AttachmentRequest {
	return api.AttachmentRequest{Sandbox: args.ContainerID, CNIIfName: args.IfName, Network: conf.Name}
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
		Sandbox: args.ContainerID, Netns: args.Netns, CNIIfName: args.IfName, Network: conf.Name,
		PodNamespace: keys.Namespace, PodName: keys.Name, PodUID: keys.UID,
		Mode: api.ModeIPAM, Pool: conf.IPAM.Pool, Annotations: conf.Annotations(), CNIArgs: conf.CNIArgs(),
	})
	if err != nil {
		return netconf.CNIError("raild allocate", err)
	}
	result := &current.Result{CNIVersion: current.ImplementedSpecVersion}
	for _, iface := range plan.Interfaces {
		if err := verbs.AddAddresses(result, iface, nil); err != nil {
			return err
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
	return verbs.Status(context.Background(), client, conf.IPAM.Pool, false)
}

func cmdGC(args *skel.CmdArgs) error {
	conf, client, err := load(args)
	if err != nil {
		return err
	}
	return verbs.GC(context.Background(), client, conf.Name, conf.ValidAttachments)
}
