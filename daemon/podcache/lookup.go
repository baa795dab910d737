package podcache

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// diagnoseTimeout bounds the one GET that explains a missing pod.
const diagnoseTimeout = 2 * time.Second

// PodAnnotations returns the annotations of pod namespace/name, and only
// of the pod with that UID when uid is not empty (a pod recreated under
// the same name must not lend its annotations). A pod not in the cache
// is waited for up to Options.Wait; the error then names the pod and why
// it is missing. It fails at once while the API connection fails.
func (c *Cache) PodAnnotations(ctx context.Context, namespace, name, uid string) (map[string]string, error) {
	deadline := time.NewTimer(c.opt.Wait)
	defer deadline.Stop()
	for {
		changed := c.changed.wait()
		pod, found := c.pod(namespace, name)
		if found && (uid == "" || string(pod.UID) == uid) {
			annotations := maps.Clone(pod.Annotations)
			if annotations == nil {
				annotations = map[string]string{}
			}
			return annotations, nil
		}
		if err := c.health.failing(); err != nil {
			return nil, fmt.Errorf("pod %s/%s: cannot read its annotations (the runtime passed none): "+
				"raild's connection to the API server fails: %w", namespace, name, err)
		}
		select {
		case <-changed:
		case <-deadline.C:
			return nil, fmt.Errorf("pod %s/%s: cannot read its annotations (the runtime passed none): %s",
				namespace, name, c.whyMissing(ctx, namespace, name, uid, pod))
		case <-ctx.Done():
			return nil, fmt.Errorf("pod %s/%s: gave up waiting for it in raild's pod informer: %w", namespace, name, ctx.Err())
		}
	}
}

// whyMissing explains, with one GET, why the pod did not reach the cache
// within the wait. cached is the pod of that name in the cache, if any.
func (c *Cache) whyMissing(ctx context.Context, namespace, name, uid string, cached *corev1.Pod) string {
	waited := fmt.Sprintf("not seen within kubernetes.podWait (%s)", c.opt.Wait)
	if cached != nil {
		waited += fmt.Sprintf("; the pod of that name on this node has UID %s, the request names UID %s (a recreated pod)", cached.UID, uid)
	}
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	pod, err := c.opt.Get.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return waited + ": the API server has no such pod"
	case err != nil:
		return waited + fmt.Sprintf(" (asking the API server failed too: %v)", err)
	case uid != "" && string(pod.UID) != uid:
		return waited + fmt.Sprintf(": the API server's pod of that name has UID %s, the request names UID %s (a recreated pod)", pod.UID, uid)
	case pod.Spec.NodeName != c.node:
		return waited + fmt.Sprintf(": the pod is not on this node (%s) but on %q", c.node, pod.Spec.NodeName)
	}
	return waited + fmt.Sprintf(": the API server has it on this node: raild's pod informer lags (%d pods cached); "+
		"raise kubernetes.podWait if this repeats", c.Len())
}
