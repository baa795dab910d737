// Package draslices resolves GPUs and NICs allocated through Dynamic
// Resource Allocation: the kubelet names a DRA device by (driver, pool,
// device); the node's ResourceSlices, kept by an informer scoped to this
// node, say which GPU that is (its PCI bus ID or UUID attributes) or which
// NIC (its PCI address, RDMA device and netdev, nic.go).
package draslices

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/railcni/rail/daemon/podinfo"
)

// DefaultWait bounds how long a lookup waits for the informer to sync or
// to see a device it does not know yet (a slice published a moment ago).
const DefaultWait = 2 * time.Second

// Slices is the node's GPU and NIC ResourceSlices. It is safe for
// concurrent use.
type Slices struct {
	node       string
	drivers    map[string]bool // GPU drivers
	nicDrivers map[string]bool
	wait       time.Duration
	informer   cache.SharedIndexInformer
	log        *slog.Logger

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every slice event
	listErr  error         // the informer's last list/watch failure
	selector string        // the field selector the informer lists with
}

// Node is the node whose slices are kept.
func (s *Slices) Node() string { return s.node }

// Synced tells whether the informer has listed the slices once.
func (s *Slices) Synced() bool { return s.informer.HasSynced() }

// GPUID returns an ID podinfo.Resolver understands for a DRA device: its
// PCI bus ID, else its parent GPU's UUID (a MIG device), else its UUID.
// It waits up to the configured wait for the informer to sync and for a
// device not seen yet. Errors wrap podinfo.ErrDRANotSynced (try again
// later) or podinfo.ErrDRAUnknownDevice, and name the device.
func (s *Slices) GPUID(ctx context.Context, dev podinfo.DRADevice) (string, error) {
	if !s.drivers[dev.Driver] {
		return "", fmt.Errorf("DRA device %s: driver %s is not a GPU driver raild reads (gpuDRADrivers: %v)", dev, dev.Driver, names(s.drivers))
	}
	d, driver, err := s.await(ctx, dev)
	if err != nil {
		return "", err
	}
	return gpuID(driver, d, dev)
}

// await finds a device in the current slices, waiting up to the
// configured wait for the informer to sync and for a device not seen yet.
func (s *Slices) await(ctx context.Context, dev podinfo.DRADevice) (resourcev1.Device, string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	if !s.informer.HasSynced() && !cache.WaitForCacheSync(ctx.Done(), s.informer.HasSynced) {
		return resourcev1.Device{}, "", fmt.Errorf("DRA device %s: %w", dev, s.notSynced())
	}
	for {
		changed := s.changes()
		d, driver, err := s.lookup(dev)
		if !errors.Is(err, podinfo.ErrDRAUnknownDevice) {
			return d, driver, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return resourcev1.Device{}, "", err
		}
	}
}

// MIGParents maps the MIG device UUIDs the slices list to their parent
// GPU's UUID (NVIDIA's driver publishes MIG devices with both).
func (s *Slices) MIGParents() map[string]string {
	out := map[string]string{}
	for _, slice := range s.current() {
		for _, d := range slice.Spec.Devices {
			uuid, parent := attribute(slice.Spec.Driver, d, "uuid"), attribute(slice.Spec.Driver, d, "parentUUID")
			if uuid != "" && parent != "" {
				out[uuid] = parent
			}
		}
	}
	return out
}

func (s *Slices) notSynced() error {
	s.mu.Lock()
	last := s.listErr
	s.mu.Unlock()
	why := "no answer from the API server yet"
	if last != nil {
		why = "last error: " + last.Error()
	}
	return fmt.Errorf("%w: the ResourceSlices of node %s are not listed yet within %s (%s); "+
		"check raild's API connection and its RBAC for resourceslices (list and watch in resource.k8s.io)",
		podinfo.ErrDRANotSynced, s.node, s.wait, why)
}

// lookup finds the device in the current slices of its driver and pool.
func (s *Slices) lookup(dev podinfo.DRADevice) (resourcev1.Device, string, error) {
	for _, slice := range s.current() {
		if slice.Spec.Driver != dev.Driver || slice.Spec.Pool.Name != dev.Pool {
			continue
		}
		for _, d := range slice.Spec.Devices {
			if d.Name == dev.Device {
				return d, slice.Spec.Driver, nil
			}
		}
	}
	return resourcev1.Device{}, "", fmt.Errorf("DRA device %s (claim %s): %w: no ResourceSlice of node %s lists it; "+
		"check the driver's slices with kubectl get resourceslices --field-selector spec.nodeName=%s -o yaml",
		dev, dev.Claim, podinfo.ErrDRAUnknownDevice, s.node, s.node)
}

func (s *Slices) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *Slices) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Slices) setListErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listErr = err
}

// names lists a driver set, sorted.
func names(drivers map[string]bool) []string {
	return slices.Sorted(maps.Keys(drivers))
}

// keep tells whether a slice describes GPUs or NICs of this node: a GPU or
// NIC driver's slice bound to this node by name. Slices for all nodes or
// for a node selector describe network-attached devices, never a node's
// own GPUs or NICs.
func (s *Slices) keep(slice *resourcev1.ResourceSlice) bool {
	spec := slice.Spec
	return (s.drivers[spec.Driver] || s.nicDrivers[spec.Driver]) && spec.NodeName != nil && *spec.NodeName == s.node &&
		spec.NodeSelector == nil && (spec.AllNodes == nil || !*spec.AllNodes)
}
