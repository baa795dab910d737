// Package podcache keeps the pods of this node in memory, from a pod
// informer whose list and watch are field-selected on spec.nodeName, so an
// ADD reads a pod's annotations without an API round trip. It keeps only
// what raild reads of a pod (name, namespace, UID, annotations, owners,
// node), and it says whether its connection to the API server is healthy.
package podcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Options tune a Cache.
type Options struct {
	// Wait is how long PodAnnotations waits for a pod that is not (yet)
	// in the cache.
	Wait time.Duration
	// Get answers the one GET that explains a pod missing after Wait
	// (nil: the informer's client). Give it a client with a timeout.
	Get kubernetes.Interface
	// Registerer takes rail_apiserver_up and
	// rail_apiserver_watch_errors_total (nil: not registered).
	Registerer prometheus.Registerer
	Log        *slog.Logger
}

// Cache is the node's pods. Safe for concurrent use.
type Cache struct {
	node     string
	opt      Options
	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
	health   *health
	changed  broadcast
}

// New builds the cache of node's pods; client must not time out watches
// (kubeclient.Clients.Watch). Nothing is contacted before Run.
func New(client kubernetes.Interface, node string, opt Options) (*Cache, error) {
	if node == "" {
		return nil, errors.New("pod cache: empty node name (set nodeName, --node-name or $NODE_NAME)")
	}
	if opt.Get == nil {
		opt.Get = client
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	c := &Cache{node: node, opt: opt}
	c.health = newHealth(c.changed.notify)
	c.factory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(strip))
	c.informer = c.factory.InformerFor(&corev1.Pod{}, c.newInformer)
	notify := func(any) { c.changed.notify() }
	if _, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: notify, DeleteFunc: notify,
		UpdateFunc: func(_, obj any) { notify(obj) }}); err != nil {
		return nil, fmt.Errorf("pod cache: %w", err)
	}
	if err := c.informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		c.health.failed(err)
		cache.DefaultWatchErrorHandler(ctx, r, err)
	}); err != nil {
		return nil, fmt.Errorf("pod cache: %w", err)
	}
	if opt.Registerer != nil {
		if err := c.health.register(opt.Registerer, c.informer.HasSynced); err != nil {
			return nil, fmt.Errorf("pod cache metrics: %w", err)
		}
	}
	return c, nil
}

// newInformer is the factory's pod informer, with every list and watch
// attempt reported to the health tracker.
func (c *Cache) newInformer(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	onNode := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", c.node).String()
	}
	pods := client.CoreV1().Pods(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			onNode(&o)
			list, err := pods.List(ctx, o)
			c.health.attempt(err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			onNode(&o)
			w, err := pods.Watch(ctx, o)
			c.health.attempt(err)
			return w, err
		},
	}
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), &corev1.Pod{},
		cache.SharedIndexInformerOptions{ResyncPeriod: resync, ObjectDescription: "pods on node " + c.node})
}

// Run lists and watches until ctx ends.
func (c *Cache) Run(ctx context.Context) {
	c.factory.Start(ctx.Done())
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
			c.opt.Log.Info("pod informer synced", "node", c.node, "pods", len(c.informer.GetStore().ListKeys()))
			c.changed.notify()
		}
	}()
	<-ctx.Done()
	c.factory.Shutdown()
}

// Healthy is nil when the cache is synced and its last list or watch
// succeeded; otherwise it says what is wrong.
func (c *Cache) Healthy() error {
	return c.health.err(c.informer.HasSynced())
}

// Len is the number of pods in the cache.
func (c *Cache) Len() int { return len(c.informer.GetStore().ListKeys()) }

// pod returns the cached pod namespace/name.
func (c *Cache) pod(namespace, name string) (*corev1.Pod, bool) {
	obj, ok, err := c.informer.GetIndexer().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	pod, ok := obj.(*corev1.Pod)
	return pod, ok
}
