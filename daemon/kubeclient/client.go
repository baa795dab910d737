// Package kubeclient connects raild to the API server: in-cluster config
// when raild runs in a pod, a kubeconfig file when one is named (tests,
// raild run by hand). Everything raild asks the API server goes through
// the clients built here.
package kubeclient

import (
	"fmt"
	"time"

	nadclient "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/client/clientset/versioned"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients are the API clients raild uses.
type Clients struct {
	Config *rest.Config
	// Kube and NAD bound every request by Config.Timeout: use them for
	// get, list, create, patch.
	Kube kubernetes.Interface
	NAD  nadclient.Interface
	// Watch has no overall timeout: informers and watches use it (an
	// http.Client timeout also cuts a watch's stream, so a watch through
	// Kube would end and be re-established every Config.Timeout).
	Watch kubernetes.Interface
}

// DefaultTimeout bounds every single API request of Kube and NAD.
const DefaultTimeout = 10 * time.Second

// Client-side rate limit, when the config sets none: client-go's own
// default (5 per second, bursts of 10) queues a GET 200 ms behind the
// previous ones as soon as a burst of pods starts (measured in
// integration/kapi, BenchmarkPodAnnotations).
const (
	DefaultQPS   = 20
	DefaultBurst = 50
)

// Config builds the client config: the kubeconfig file when one is
// named, else the pod's in-cluster service account.
func Config(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		if err := checkKubeconfigFiles(kubeconfig); err != nil {
			return nil, fmt.Errorf("kubeconfig %q: %w", kubeconfig, err)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %q: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("in-cluster config (set kubeconfig, or run raild in a pod with a service account): %w", err)
	}
	return cfg, nil
}

// UserAgent names raild in the API server's logs and audit.
const UserAgent = "raild"

// New builds the clients from a config. It does not contact the server.
func New(cfg *rest.Config, userAgent string) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	}
	if userAgent != "" {
		cfg.UserAgent = userAgent
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	nad, err := nadclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("network-attachment-definition client: %w", err)
	}
	unbounded := rest.CopyConfig(cfg)
	unbounded.Timeout = 0
	watch, err := kubernetes.NewForConfig(unbounded)
	if err != nil {
		return nil, fmt.Errorf("kubernetes watch client: %w", err)
	}
	return &Clients{Config: cfg, Kube: kube, NAD: nad, Watch: watch}, nil
}
