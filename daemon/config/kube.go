package config

import (
	"errors"
	"fmt"
	"time"
)

// Values of kubernetes.enabled.
const (
	KubeAuto = "auto"
	KubeOn   = "true"
	KubeOff  = "false"
)

// DefaultPodWait is how long an ADD waits for its pod to reach the informer.
const DefaultPodWait = 3 * time.Second

// maxPodWait keeps podWait, plus the up to 2s raild then takes to ask the
// API server why, below the plugin's default call timeout (10s), so a pod
// that never comes fails with raild's reason, not a timeout.
const maxPodWait = 7 * time.Second

// Kubernetes is raild's connection to the API server.
type Kubernetes struct {
	// Enabled is auto (the default: on when raild runs in a pod, i.e.
	// $KUBERNETES_SERVICE_HOST is set, or when kubeconfig names a file),
	// true or false.
	Enabled string `json:"enabled,omitempty"`
	// Kubeconfig names a kubeconfig file (--kubeconfig); empty uses the
	// pod's service account.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// PodWait is how long an ADD whose runtime passed no annotations waits
	// for its pod to appear in the node's pod informer.
	PodWait string `json:"podWait,omitempty"`

	// On is Enabled resolved by Finish.
	On bool `json:"-"`
	// PodWaitDuration is PodWait parsed by Finish.
	PodWaitDuration time.Duration `json:"-"`
}

// finish resolves auto with getenv and validates every key.
func (k *Kubernetes) finish(getenv func(string) string) error {
	var errs []error
	if k.Enabled == "" {
		k.Enabled = KubeAuto
	}
	switch k.Enabled {
	case KubeAuto:
		k.On = getenv("KUBERNETES_SERVICE_HOST") != "" || k.Kubeconfig != ""
	case KubeOn:
		k.On = true
	case KubeOff:
		k.On = false
	default:
		errs = append(errs, fmt.Errorf("kubernetes.enabled %q: want auto, true or false (auto: on in a pod or with a kubeconfig)", k.Enabled))
	}
	k.PodWaitDuration = DefaultPodWait
	if k.PodWait != "" {
		d, err := time.ParseDuration(k.PodWait)
		if err != nil || d < 0 || d > maxPodWait {
			errs = append(errs, fmt.Errorf("kubernetes.podWait %q: want a duration from 0s to %s such as \"3s\" "+
				"(how long an ADD waits for its pod to reach raild's pod informer)", k.PodWait, maxPodWait))
		} else {
			k.PodWaitDuration = d
		}
	}
	if k.Enabled == KubeOff && k.Kubeconfig != "" {
		errs = append(errs, fmt.Errorf("kubernetes.kubeconfig %q is set but kubernetes.enabled is false: "+
			"remove one of them (--kubeconfig also turns the connection on under auto)", k.Kubeconfig))
	}
	return errors.Join(errs...)
}
