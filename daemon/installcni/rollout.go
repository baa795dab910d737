package installcni

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/railcni/rail/daemon/kubeclient"
)

// keepTimeout bounds the questions preStop asks the API server; the pod's
// grace period (30 s in the chart) covers them.
const keepTimeout = 5 * time.Second

// keepForRollout tells whether the raild pod $POD_NAMESPACE/$POD_NAME
// stops for a rollout or a restart (its DaemonSet lives: keep rail's
// entry, so pods created meanwhile still get rail) or for good (the
// DaemonSet is being deleted, is gone or was replaced). Any doubt (no
// pod name, API server unreachable or refusing, as after `helm
// uninstall` removed raild's RBAC) removes the entry, as before.
func keepForRollout(kubeconfig string, out io.Writer) bool {
	namespace, pod := os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME")
	if namespace == "" || pod == "" {
		fmt.Fprintln(out, "--unless-rollout: $POD_NAMESPACE or $POD_NAME is empty (set them from the downward API); removing rail's entry")
		return false
	}
	cfg, err := kubeclient.Config(kubeconfig)
	if err == nil {
		cfg.Timeout = keepTimeout
	}
	var clients *kubeclient.Clients
	if err == nil {
		clients, err = kubeclient.New(cfg, kubeclient.UserAgent)
	}
	if err != nil {
		fmt.Fprintf(out, "--unless-rollout: %v; removing rail's entry\n", err)
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), keepTimeout)
	defer cancel()
	keep, why := ownerLives(ctx, clients.Kube, namespace, pod)
	if keep {
		fmt.Fprintf(out, "kept rail's entry: %s\n", why)
	} else {
		fmt.Fprintf(out, "removing rail's entry: %s\n", why)
	}
	return keep
}

// ownerLives reports whether the pod's controlling DaemonSet exists, is
// the same object (UID) and is not being deleted, and says why not.
func ownerLives(ctx context.Context, kube kubernetes.Interface, namespace, name string) (bool, string) {
	pod, err := kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("cannot read pod %s/%s: %v", namespace, name, err)
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "DaemonSet" {
		return false, fmt.Sprintf("pod %s/%s has no controlling DaemonSet", namespace, name)
	}
	ds, err := kube.AppsV1().DaemonSets(namespace).Get(ctx, owner.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("DaemonSet %s/%s is gone", namespace, owner.Name)
	case err != nil:
		return false, fmt.Sprintf("cannot read DaemonSet %s/%s: %v", namespace, owner.Name, err)
	case ds.UID != owner.UID:
		return false, fmt.Sprintf("DaemonSet %s/%s was replaced (UID %s, the pod's owner was %s)", namespace, owner.Name, ds.UID, owner.UID)
	case ds.DeletionTimestamp != nil:
		return false, fmt.Sprintf("DaemonSet %s/%s is being deleted", namespace, owner.Name)
	}
	return true, fmt.Sprintf("DaemonSet %s/%s lives (a rollout or a restart of this pod)", namespace, owner.Name)
}
