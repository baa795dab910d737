package railpool

import (
	"fmt"

	"k8s.io/client-go/dynamic"

	"github.com/railcni/rail/daemon/kubeclient"
)

// NewClaimer builds a Claimer for node on raild's API clients.
func NewClaimer(clients *kubeclient.Clients, node string) (Claimer, error) {
	dyn, err := dynamic.NewForConfig(clients.Config)
	if err != nil {
		return Claimer{}, fmt.Errorf("railpools: dynamic client: %w", err)
	}
	return Claimer{Kube: clients.Kube, Dyn: dyn, Node: node}, nil
}
