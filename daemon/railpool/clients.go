package railpool

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/railcni/rail/daemon/kubeclient"
)

// NewClaimer builds a Claimer for node on raild's API clients: requests
// bounded by the clients' timeout, the RailPool watch without one (an
// http.Client timeout would also cut the watch's stream).
func NewClaimer(clients *kubeclient.Clients, node string) (Claimer, error) {
	dyn, err := dynamic.NewForConfig(clients.Config)
	if err != nil {
		return Claimer{}, fmt.Errorf("railpools: dynamic client: %w", err)
	}
	unbounded := rest.CopyConfig(clients.Config)
	unbounded.Timeout = 0
	watch, err := dynamic.NewForConfig(unbounded)
	if err != nil {
		return Claimer{}, fmt.Errorf("railpools: dynamic watch client: %w", err)
	}
	return Claimer{Kube: clients.Kube, Dyn: dyn, Watch: watch, Node: node}, nil
}
