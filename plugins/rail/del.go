package main

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/verbs"
)

// del undoes ADD. What it undoes comes from what ADD did — the lease raild
// keeps, else the alias rail left on each link (a cached result that does
// not parse is ignored) — never from the netconf,
// which may have changed since. It succeeds when there is nothing left to
// undo: netns gone or empty, raild unreachable, called twice, a pod that
// passed through, unknown container. Without a lease of its own it works
// only inside this sandbox's netns, so it never touches a NIC that raild
// has handed to another sandbox; it never works in its own (host) netns.
func (p *plugin) del(args *skel.CmdArgs) error {
	conf, prev, err := netconf.LoadDel(args.StdinData)
	if err != nil {
		return err
	}
	ctx := context.Background()
	raild := p.raild(conf.Socket, conf.CallTimeout)
	plan, err := raild.Check(ctx, attachmentRequest(args, conf))
	ownLease := err == nil
	if err != nil && !api.IsCode(err, api.CodeUnknownContainer) && !api.IsUnreachable(err) {
		return netconf.CNIError("raild check", err)
	}
	netnsPath := p.podNetns(args.Netns)
	if netnsPath == "" && ownLease {
		// The runtime's second DEL (on sandbox removal) comes without a
		// netns; the one recorded at ADD may still hold the NIC.
		netnsPath = p.podNetns(plan.Netns)
	}
	specs, err := p.delSpecs(conf, args, prev, plan, ownLease, netnsPath)
	if err != nil {
		return types.NewError(types.ErrInternal, "find rail's interfaces", err.Error())
	}
	var errs []error
	for _, spec := range specs {
		if err := p.links.Detach(netnsPath, spec); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		// The lease stays: it is what the next DEL needs to finish.
		return types.NewError(types.ErrInternal, "detach", errors.Join(errs...).Error())
	}
	if err := raild.Release(ctx, attachmentRequest(args, conf)); err != nil && !api.IsCode(err, api.CodeTryAgainLater) {
		return netconf.CNIError("raild release", err)
	}
	return nil
}

// podNetns is path unless it is empty or the plugin's own netns, where
// nothing of a pod can be (ADD refuses it).
func (p *plugin) podNetns(path string) string {
	if path == "" || verbs.NotNetns(path) {
		return ""
	}
	if own, err := p.ownNetns(path); err != nil || own {
		return ""
	}
	return path
}

// delSpecs lists what to detach: the lease's interfaces in the lease's
// mode; else, in a pod netns that is still there, the interfaces this
// plugin added by the cached result and those whose alias names this
// attachment (a cached result that did not parse, or none), each in the
// mode its alias records (Mode left empty).
func (p *plugin) delSpecs(conf *netconf.Rail, args *skel.CmdArgs, prev *current.Result, plan *api.Plan,
	ownLease bool, netnsPath string) ([]attach.Spec, error) {
	switch {
	case ownLease:
		specs := make([]attach.Spec, 0, len(plan.Interfaces))
		for _, iface := range plan.Interfaces {
			specs = append(specs, detachSpecFor(iface, plan.Mode))
		}
		return specs, nil
	case netnsPath == "" || !p.netnsAlive(netnsPath):
		return nil, nil
	}
	specs := specsFromPrevResult(conf, args, prev)
	owned, err := p.links.OwnedBy(netnsPath, attach.Owner{Sandbox: args.ContainerID, CNIIfName: args.IfName, Network: conf.Name})
	if err != nil {
		return nil, err
	}
	for _, name := range owned {
		if !slices.ContainsFunc(specs, func(s attach.Spec) bool { return s.Name == name }) {
			specs = append(specs, attach.Spec{Name: name})
		}
	}
	// Without a lease, a softRoCE node's rxe of each interface is found
	// by the name its lease would have given it (none on other nodes).
	for i := range specs {
		specs[i].SoftRoCE = rdma.SoftRoCEName(args.ContainerID, specs[i].Name)
	}
	return specs, nil
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
		specs = append(specs, attach.Spec{Name: iface.Name})
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
