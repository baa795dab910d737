package main

import (
	"context"
	"fmt"
	"net"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
)

func cmdAdd(args *skel.CmdArgs) (retErr error) {
	conf, prev, err := loadConf(args.StdinData)
	if err != nil {
		return err
	}
	keys, err := netconf.ParsePodKeys(args.Args)
	if err != nil {
		return err
	}
	mode, err := rdmaMode(conf)
	if err != nil {
		return err
	}
	ctx := context.Background()
	client := api.NewClient(conf.Socket, conf.CallTimeout)
	plan, err := client.Allocate(ctx, allocateRequest(args, conf, keys, prev != nil))
	if err != nil {
		return netconf.CNIError("raild allocate", err)
	}
	var undo []func()
	defer func() {
		if retErr == nil {
			return
		}
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		_ = client.Release(ctx, attachmentRequest(args, conf))
	}()
	result := startResult(conf, prev)
	for _, iface := range plan.Interfaces {
		spec, err := specFor(conf, iface, mode)
		if err != nil {
			return netconf.CNIError("plan", err)
		}
		got, created, err := attachOne(args.Netns, spec)
		if err != nil {
			return types.NewError(types.ErrInternal, "attach "+describeNIC(iface), err.Error())
		}
		if created {
			undo = append(undo, func() { _ = attach.Detach(args.Netns, spec) })
		}
		addToResult(result, args.Netns, iface, got)
	}
	return types.PrintResult(result, conf.CNIVersion)
}

// attachOne attaches one interface, or finds it already attached (a
// repeated ADD). created says whether this call made it.
func attachOne(netns string, spec attach.Spec) (attach.Result, bool, error) {
	if attach.Check(netns, spec) == nil {
		res, err := attach.Inspect(netns, spec.Name)
		return res, false, err
	}
	res, err := attach.Attach(netns, spec)
	return res, err == nil, err
}

// startResult is the previous result when chained, else an empty one.
func startResult(conf *netconf.Rail, prev *current.Result) *current.Result {
	if prev != nil {
		prev.CNIVersion = current.ImplementedSpecVersion
		return prev
	}
	return &current.Result{CNIVersion: current.ImplementedSpecVersion}
}

func addToResult(result *current.Result, netns string, iface api.PlanInterface, got attach.Result) {
	entry := &current.Interface{Name: got.Name, Mac: got.MAC, Mtu: got.MTU, Sandbox: netns}
	if iface.NIC != nil {
		entry.PciID = iface.NIC.PCI
	}
	result.Interfaces = append(result.Interfaces, entry)
	index := len(result.Interfaces) - 1
	for _, a := range iface.Addresses {
		ipnet, err := types.ParseCIDR(a.CIDR)
		if err != nil {
			continue
		}
		ipc := &current.IPConfig{Interface: current.Int(index), Address: *ipnet}
		if a.Gateway != "" {
			ipc.Gateway = parseIP(a.Gateway)
		}
		result.IPs = append(result.IPs, ipc)
	}
	for _, r := range iface.Routes {
		if route, err := toCNIRoute(r); err == nil {
			result.Routes = append(result.Routes, route)
		}
	}
}

func toCNIRoute(r api.Route) (*types.Route, error) {
	dst, err := types.ParseCIDR(r.Dst)
	if err != nil {
		return nil, fmt.Errorf("route dst %q: %w", r.Dst, err)
	}
	return &types.Route{Dst: *dst, GW: parseIP(r.GW)}, nil
}

func parseIP(s string) net.IP {
	if s == "" {
		return nil
	}
	return net.ParseIP(s)
}
