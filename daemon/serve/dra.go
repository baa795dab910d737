package serve

import (
	"context"
	"errors"
	"log/slog"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/draplugin"
	"github.com/railcni/rail/daemon/draslices"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/placement"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/ipam"
)

// openDRAClaims opens the prepared claims when Rail is a DRA driver
// (dra.enabled), before the service that reads them at ADD; nil when not.
func openDRAClaims(cfg *config.Config) (*draplugin.Claims, error) {
	if !cfg.DRA.Enabled {
		return nil, nil
	}
	return draplugin.OpenClaims(draplugin.ClaimsFile(cfg.StateDir))
}

// serviceClaims gives the service the Rail devices a pod's prepared
// claims hold (nil when Rail is no DRA driver).
func serviceClaims(claims *draplugin.Claims) service.DRAClaims {
	if claims == nil {
		return nil
	}
	return func(namespace, name, uid string) []service.DRAClaim {
		var out []service.DRAClaim
		for _, p := range claims.ForPod(namespace, name, uid) {
			for _, a := range p.Devices {
				c := service.DRAClaim{Claim: p.Namespace + "/" + p.Name, Device: a.Device, NIC: a.NIC, VF: a.VF,
					Mode: a.Params.Mode, Pool: a.Params.Pool}
				if a.Params.VFKeys.First() != "" {
					if vf, err := a.Params.VFKeys.Config(); err == nil { // checked at prepare
						c.VFKeys = &vf
					}
				}
				out = append(out, c)
			}
		}
		return out
	}
}

// draDriver is what the DRA driver reads of raild.
type draDriver struct {
	cfg     *config.Config
	clients *kubeclient.Clients
	inv     *inventory.Inventory
	svc     *service.Service
	alloc   *ipam.Allocator
	gpus    *podinfo.GPUSource
	rails   map[string]int
	claims  *draplugin.Claims
}

// newDRAPlugin makes Rail's DRA driver (nil when dra.enabled is off).
func newDRAPlugin(d draDriver, log *slog.Logger) (*draplugin.Plugin, error) {
	if d.claims == nil {
		return nil, nil
	}
	if d.clients == nil {
		return nil, errors.New("dra.enabled: raild has no API server connection (kubernetes.enabled, kubeconfig)")
	}
	slices, _ := d.gpus.DRA.(*draslices.Slices) // the node's slices informer, nil without one
	driver := d.cfg.DRA.DriverName
	if driver == "" {
		driver = draplugin.DefaultDriverName
	}
	l := limits(d.cfg)
	lim := draplugin.Limits{NICs: l.NICs, Modes: l.ServedModes(), Source: l.Source}
	view := func() draplugin.NodeView {
		snap := d.inv.Current()
		v := draplugin.NodeView{Machine: snap.Machine, Protected: snap.Protected, Rails: d.rails, Limits: lim}
		d.svc.NICUses(func(nic string, h placement.Holder) {
			v.Uses = append(v.Uses, draplugin.Use{NIC: nic, VF: h.VF, Pod: h.Pod(), Mode: h.Mode})
		})
		if slices != nil {
			v.Others = slices.NICsOf(driver)
		}
		return v
	}
	pools := func() []string {
		var names []string
		for _, p := range d.svc.Pools() {
			names = append(names, p.Name)
		}
		return names
	}
	return draplugin.New(draplugin.Options{Config: d.cfg.DRA, Node: d.cfg.NodeName, Kube: d.clients.Kube, View: view, Pools: pools,
		Claims: d.claims, Attachments: attachments(d.alloc), Log: log})
}

// followSlices wakes the driver on every slice event (another driver's
// NICs come and go) until ctx ends.
func followSlices(ctx context.Context, gpus *podinfo.GPUSource, p *draplugin.Plugin) {
	slices, ok := gpus.DRA.(*draslices.Slices)
	if !ok || slices == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-slices.Changed():
			p.MachineChanged()
		}
	}
}

// attachments are a pod's rail interfaces from its leases, with the MAC
// each has in the pod now ("" when it cannot be read).
func attachments(alloc *ipam.Allocator) func(namespace, name, uid string) []draplugin.Attachment {
	return func(namespace, name, uid string) []draplugin.Attachment {
		var out []draplugin.Attachment
		for _, l := range alloc.Leases() {
			if l.PodNamespace != namespace || (uid != "" && l.PodUID != uid) || (uid == "" && l.PodName != name) || len(l.Holds()) == 0 {
				continue
			}
			nic := "" // a vf lease whose VF the node no longer has holds no port
			if len(l.NICs) > 0 {
				nic = l.NICs[0]
			}
			out = append(out, draplugin.Attachment{NIC: nic, VF: l.VF, IfName: l.IfName, IPs: []string{l.Address.String()},
				MAC: macIn(l.Netns, l.IfName)})
		}
		return out
	}
}

// macIn reads an interface's MAC in a pod's netns.
func macIn(nsPath, ifname string) string {
	if nsPath == "" {
		return ""
	}
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return ""
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return ""
	}
	defer h.Close()
	link, err := h.LinkByName(ifname)
	if err != nil {
		return ""
	}
	return link.Attrs().HardwareAddr.String()
}
