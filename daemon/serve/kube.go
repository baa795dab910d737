package serve

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/podcache"
	"github.com/railcni/rail/daemon/service"
)

// kube is raild's API-server connection as the rest of raild uses it:
// the clients (hand Clients to whatever else talks to the API server) and
// the node's pod cache. A nil *kube is raild without an API server.
type kube struct {
	Clients *kubeclient.Clients
	Pods    *podcache.Cache
}

// podMeta is the service's reader of pods' annotations (nil without an
// API server).
func (k *kube) podMeta() service.PodMeta {
	if k == nil {
		return nil
	}
	return k.Pods
}

// connectKube builds the clients when the kubernetes section turns the
// connection on (nil otherwise). It does not contact the server: raild
// starts, and serves pods that need nothing from the cluster, while the
// API server is away.
func connectKube(cfg *config.Config) (*kubeclient.Clients, error) {
	if !cfg.Kubernetes.On {
		return nil, nil
	}
	restCfg, err := kubeclient.Config(cfg.Kubernetes.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubernetes (set kubernetes.enabled: false to run without an API server): %w", err)
	}
	return kubeclient.New(restCfg, kubeclient.UserAgent)
}

// newKube builds the pod cache on the clients; nil when the connection is off.
func newKube(clients *kubeclient.Clients, cfg *config.Config, m *metrics.Metrics, log *slog.Logger) (*kube, error) {
	if clients == nil {
		return nil, nil
	}
	pods, err := podcache.New(clients.Watch, cfg.NodeName, podcache.Options{Wait: cfg.Kubernetes.PodWaitDuration,
		Get: clients.Kube, Registerer: m.Registry, Log: log})
	if err != nil {
		return nil, err
	}
	log.Info("API server connection on", "host", clients.Config.Host, "node", cfg.NodeName, "podWait", cfg.Kubernetes.PodWaitDuration)
	return &kube{Clients: clients, Pods: pods}, nil
}

// run keeps the pod cache current until ctx ends.
func (k *kube) run(ctx context.Context) {
	if k != nil {
		go k.Pods.Run(ctx)
	}
}

// healthy is nil without an API connection, or when it works.
func (k *kube) healthy() error {
	if k == nil {
		return nil
	}
	return k.Pods.Healthy()
}
