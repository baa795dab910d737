package draslices

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	informers "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/podinfo"
)

// Options configure Start.
type Options struct {
	// Node is this node's name (the slices' spec.nodeName).
	Node string
	// Drivers are the DRA drivers whose devices are GPUs
	// (podinfo.DefaultDRADriver when empty).
	Drivers []string
	// NICDrivers are the DRA drivers whose devices are NICs raild
	// completes (none: NIC slices are not kept).
	NICDrivers []string
	// Wait bounds one lookup's wait (DefaultWait when <= 0).
	Wait time.Duration
	// Resync is the informer's resync period (0: none; watches keep it current).
	Resync time.Duration
	Log    *slog.Logger
}

// nodeNameField is the ResourceSlice field selector the API server offers.
const nodeNameField = "spec.nodeName"

// Start runs a ResourceSlice informer scoped to the node until ctx ends.
// It returns at once, even when the API server does not answer: lookups
// wait (boundedly) for the first list. With nil clients (raild without an
// API server) it returns nil, nil: DRA off.
func Start(ctx context.Context, clients *kubeclient.Clients, opt Options) (*Slices, error) {
	if clients == nil {
		return nil, nil
	}
	if opt.Node == "" {
		return nil, errors.New("dra slices: node name is empty; set nodeName in raild's config (or NODE_NAME)")
	}
	s := newSlices(opt)
	s.selector = fields.OneTermEqualSelector(nodeNameField, opt.Node).String()
	s.informer = informers.NewFilteredResourceSliceInformer(clients.Watch, opt.Resync, cache.Indexers{},
		func(o *metav1.ListOptions) { o.FieldSelector = s.fieldSelector() })
	if err := s.informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		s.setListErr(err)
		s.log.Warn("ResourceSlice list/watch failed; DRA GPUs wait for it", "error", err)
	}); err != nil {
		return nil, fmt.Errorf("dra slices: %w", err)
	}
	if _, err := s.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.notify() },
		UpdateFunc: func(any, any) { s.notify() },
		DeleteFunc: func(any) { s.notify() },
	}); err != nil {
		return nil, fmt.Errorf("dra slices: %w", err)
	}
	go s.run(ctx, clients)
	return s, nil
}

// run asks whether the API server filters by node, then keeps the informer.
func (s *Slices) run(ctx context.Context, clients *kubeclient.Clients) {
	served, err := fieldSelectorServed(ctx, clients, s.fieldSelector(), s.log)
	s.setListErr(err) // what a lookup reports until the informer has listed
	if !served {
		s.mu.Lock()
		s.selector = "" // the reader's filter (keep) does the scoping
		s.mu.Unlock()
	}
	s.informer.RunWithContext(ctx)
}

func (s *Slices) fieldSelector() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.selector
}

func newSlices(opt Options) *Slices {
	drivers := opt.Drivers
	if len(drivers) == 0 {
		drivers = []string{podinfo.DefaultDRADriver}
	}
	s := &Slices{node: opt.Node, drivers: map[string]bool{}, nicDrivers: map[string]bool{}, wait: opt.Wait, log: opt.Log, changed: make(chan struct{})}
	for _, d := range drivers {
		s.drivers[d] = true
	}
	for _, d := range opt.NICDrivers {
		s.nicDrivers[d] = true
	}
	if s.wait <= 0 {
		s.wait = DefaultWait
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// fieldSelectorServed asks once whether the API server filters slices by
// spec.nodeName (it does since resource.k8s.io/v1beta1); an API server
// that refuses the field gets an unfiltered watch instead. Other failures
// (unreachable, RBAC) keep the selector and are returned: the informer
// retries, and lookups report the error until it has listed.
func fieldSelectorServed(ctx context.Context, clients *kubeclient.Clients, selector string, log *slog.Logger) (bool, error) {
	_, err := clients.Kube.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: selector, Limit: 1})
	if apierrors.IsBadRequest(err) {
		log.Warn("API server does not filter ResourceSlices by spec.nodeName: watching all slices, keeping this node's", "error", err)
		return false, nil
	}
	if err != nil {
		log.Warn("listing ResourceSlices failed; the informer retries", "error", err)
		return true, fmt.Errorf("list ResourceSlices: %w", err)
	}
	return true, nil
}
