package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
)

// cmdDel undoes ADD. It succeeds when there is nothing left to undo: netns
// gone or empty, raild down, called twice, unknown container. It never
// touches a NIC that raild has handed to another sandbox: without a lease of
// its own it works only inside this sandbox's netns.
func cmdDel(args *skel.CmdArgs) error {
	conf, prev, err := loadConf(args.StdinData)
	if err != nil {
		return err
	}
	mode, err := rdmaMode(conf)
	if err != nil {
		mode = ""
	}
	ctx := context.Background()
	client := api.NewClient(conf.Socket, conf.CallTimeout)
	plan, err := client.Check(ctx, attachmentRequest(args, conf))
	ownLease := err == nil
	if err != nil && !api.IsCode(err, api.CodeUnknownContainer) && !api.IsCode(err, api.CodeTryAgainLater) {
		return netconf.CNIError("raild check", err)
	}
	netnsPath := args.Netns
	if netnsPath == "" && ownLease {
		// The runtime's second DEL (on sandbox removal) comes without a
		// netns; the one recorded at ADD may still hold the NIC.
		netnsPath = plan.Netns
	}
	netnsAlive := netnsExists(netnsPath)
	var specs []attach.Spec
	switch {
	case ownLease:
		for _, iface := range plan.Interfaces {
			spec, err := specFor(conf, iface, mode)
			if err != nil {
				return netconf.CNIError("plan", err)
			}
			specs = append(specs, spec)
		}
	case netnsAlive:
		specs = specsFromPrevResult(conf, args, prev)
	}
	var errs []error
	for _, spec := range specs {
		if !netnsAlive && !ownLease {
			continue
		}
		if err := attach.Detach(netnsPath, spec); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return types.NewError(types.ErrInternal, "detach", errors.Join(errs...).Error())
	}
	if err := client.Release(ctx, attachmentRequest(args, conf)); err != nil && !api.IsCode(err, api.CodeTryAgainLater) {
		return netconf.CNIError("raild release", err)
	}
	return nil
}

// specsFromPrevResult names the interfaces this plugin added, from the
// cached result, when raild no longer knows the attachment.
func specsFromPrevResult(conf *netconf.Rail, args *skel.CmdArgs, prev *current.Result) []attach.Spec {
	if prev == nil {
		return nil
	}
	chained := false
	for _, iface := range prev.Interfaces {
		chained = chained || prefixed(conf.IfPrefix, iface.Name)
	}
	var specs []attach.Spec
	for _, iface := range prev.Interfaces {
		if iface.Sandbox == "" || !ownName(conf, chained, args.IfName, iface.Name) {
			continue
		}
		specs = append(specs, attach.Spec{Mode: attach.Mode(conf.Mode), Name: iface.Name})
	}
	return specs
}

// ownName: rail0, rail1 when chained (CNI_IFNAME is then the primary
// plugin's eth0, never ours); net1, net1-1 alone.
func ownName(conf *netconf.Rail, chained bool, ifname, name string) bool {
	if chained {
		return prefixed(conf.IfPrefix, name)
	}
	return name == ifname || strings.HasPrefix(name, ifname+"-")
}

// prefixed: prefix followed by digits only (rail0, rail12).
func prefixed(prefix, name string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
}

func netnsExists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}
