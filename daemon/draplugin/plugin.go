// Package draplugin is Rail as a DRA driver (resource.k8s.io/v1): raild
// publishes the node's RDMA ports (and in vf mode its VFs) as the devices
// of a ResourceSlice pool named after the node, through the kubelet
// plugin helper of k8s.io/dynamic-resource-allocation; the kubelet's
// NodePrepareResources records which devices each claim got (in memory
// and in the state dir), the CNI ADD of the claim's pod attaches exactly
// those (daemon/service), and each claim's status gets the interface,
// addresses and conditions (status.go).
package draplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
)

// republishInterval is the safety net beside MachineChanged.
const republishInterval = 30 * time.Second

// Options wire a Plugin.
type Options struct {
	Config Config
	Node   string
	Kube   kubernetes.Interface
	// View is the node as the slice is built from it now (ClaimPods is
	// filled in by the plugin).
	View func() NodeView
	// Pools are the node's address pools (a claim's parameters.pool).
	Pools func() []string
	// Claims keeps the prepared claims (OpenClaims on the state dir).
	Claims *Claims
	// Attachments are a pod's rail interfaces, for the claims' status.
	Attachments func(namespace, name, uid string) []Attachment
	Log         *slog.Logger
}

// Plugin is Rail's DRA driver on one node.
type Plugin struct {
	opt      Options
	cfg      Config
	log      *slog.Logger
	claims   *Claims
	updated  chan struct{}
	noTaints atomic.Bool // the API server dropped device taints
	noShare  atomic.Bool // the API server dropped consumable capacity
	catalog  atomic.Pointer[Catalog]
	status   *statusWriter

	mu        sync.Mutex // one prepare, unprepare or publish at a time
	published []resourcev1.Device
	helper    *kubeletplugin.Helper
}

// New checks the options; Run serves.
func New(opt Options) (*Plugin, error) {
	cfg, err := opt.Config.settings()
	if err != nil {
		return nil, err
	}
	switch {
	case opt.Node == "":
		return nil, errors.New("dra: the node name is empty; set nodeName (or NODE_NAME)")
	case opt.View == nil || opt.Claims == nil:
		return nil, errors.New("dra: no node view or claims store")
	}
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opt.Pools == nil {
		opt.Pools = func() []string { return nil }
	}
	p := &Plugin{opt: opt, cfg: cfg, log: log.With("component", "dra", "driver", cfg.DriverName), claims: opt.Claims,
		updated: make(chan struct{}, 1)}
	p.status = newStatusWriter(p)
	p.rebuild()
	return p, nil
}

// Driver is the driver name the plugin publishes under.
func (p *Plugin) Driver() string { return p.cfg.DriverName }

// Claims are the prepared claims.
func (p *Plugin) Claims() *Claims { return p.claims }

// MachineChanged wakes the publisher: the inventory published a new
// snapshot, or a lease or claim changed. It never blocks.
func (p *Plugin) MachineChanged() {
	select {
	case p.updated <- struct{}{}:
	default:
	}
}

// Run registers with the kubelet, publishes the slice and keeps it
// current until ctx ends.
func (p *Plugin) Run(ctx context.Context) error {
	if p.opt.Kube == nil {
		return errors.New("dra: raild has no API server connection (kubernetes.enabled); the DRA driver needs one")
	}
	registry := filepath.Join(p.cfg.KubeletDir, "plugins_registry")
	data := filepath.Join(p.cfg.KubeletDir, "plugins", p.cfg.DriverName)
	for _, dir := range []string{registry, data} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("dra: the kubelet's plugin dirs: %w", err)
		}
	}
	helper, err := kubeletplugin.Start(ctx, p, kubeletplugin.DriverName(p.cfg.DriverName), kubeletplugin.NodeName(p.opt.Node),
		kubeletplugin.KubeClient(p.opt.Kube), kubeletplugin.RegistrarDirectoryPath(registry), kubeletplugin.PluginDataDirectoryPath(data))
	if err != nil {
		return fmt.Errorf("dra: serve the kubelet DRA plugin API: %w", err)
	}
	defer helper.Stop()
	p.mu.Lock()
	p.helper = helper
	p.mu.Unlock()
	go p.status.run(ctx)
	p.log.Info("DRA driver registered", "kubeletDir", p.cfg.KubeletDir, "node", p.opt.Node)
	tick := time.NewTicker(republishInterval)
	defer tick.Stop()
	for {
		if err := p.publish(ctx); err != nil {
			p.log.Warn("cannot publish the ResourceSlice", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-p.updated:
		case <-tick.C:
		}
	}
}

// rebuild builds the catalog from the node as it is now.
func (p *Plugin) rebuild() *Catalog {
	view := p.opt.View()
	view.ClaimPods = p.claims.Pods()
	cat := Build(p.cfg, view, p.noTaints.Load(), p.noShare.Load())
	p.catalog.Store(&cat)
	return &cat
}

// Catalog is the catalog last built.
func (p *Plugin) Catalog() *Catalog { return p.catalog.Load() }

// publish hands the devices to the ResourceSlice controller when they
// changed (it writes the slices, and rewrites them if someone else does).
func (p *Plugin) publish(ctx context.Context) error {
	cat := p.rebuild()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.helper == nil || (p.published != nil && apiequality.Semantic.DeepEqual(p.published, cat.Devices)) {
		return nil
	}
	for _, l := range cat.Left {
		p.log.Debug("not published", "nic", l.Name, "why", l.Reason)
	}
	pool := resourceslice.Pool{Slices: chunks(cat.Devices)}
	if err := p.helper.PublishResources(ctx, resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{p.opt.Node: pool}}); err != nil {
		return err
	}
	p.published = slices.Clone(cat.Devices)
	if p.published == nil {
		p.published = []resourcev1.Device{}
	}
	p.log.Info("ResourceSlice devices published", "devices", len(cat.Devices), "unavailable", unavailable(cat), "left", len(cat.Left))
	return nil
}

// chunks splits the devices into slices of at most the API's maximum.
func chunks(devs []resourcev1.Device) []resourceslice.Slice {
	out := []resourceslice.Slice{}
	for d := range slices.Chunk(devs, resourcev1.ResourceSliceMaxDevices) {
		out = append(out, resourceslice.Slice{Devices: d})
	}
	if len(out) == 0 {
		out = append(out, resourceslice.Slice{Devices: []resourcev1.Device{}})
	}
	return out
}

func unavailable(cat *Catalog) int {
	n := 0
	for _, e := range cat.Entries {
		if e.Unavailable != "" {
			n++
		}
	}
	return n
}

// HandleError falls back where the API server dropped fields the
// slices need (taints: unavailable devices leave instead; consumable
// capacity: shared ports become exclusive) and logs the rest.
func (p *Plugin) HandleError(_ context.Context, err error, msg string) {
	var dropped *resourceslice.DroppedFieldsError
	if errors.As(err, &dropped) {
		for _, f := range dropped.DisabledFeatures() {
			switch f {
			case "DRADeviceTaints":
				if !p.noTaints.Swap(true) {
					p.log.Warn("the API server drops device taints (feature DRADeviceTaints off): unavailable devices leave the slice instead")
				}
			case "DRAConsumableCapacity":
				if !p.noShare.Swap(true) {
					p.log.Warn("the API server drops consumable capacity (feature DRAConsumableCapacity off): shared ports are published as exclusive devices")
				}
			}
		}
		p.mu.Lock()
		p.published = nil
		p.mu.Unlock()
		p.MachineChanged()
		return
	}
	p.log.Warn(msg, "error", err)
}

// uids are the claims' UIDs.
func uids(claims []kubeletplugin.NamespacedObject) []types.UID {
	out := make([]types.UID, len(claims))
	for i, c := range claims {
		out[i] = c.UID
	}
	return out
}
