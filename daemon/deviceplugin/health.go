package deviceplugin

import (
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/pkg/topology"
)

// health is Healthy when at least one of the NICs has an ACTIVE port in
// the inventory's snapshot: a pod given the resource can then reach some
// rail. Placement reads the same snapshot.
func health(nics []*topology.NIC) string {
	for _, n := range nics {
		for _, p := range n.Ports {
			if p.State == topology.PortActive {
				return pluginapi.Healthy
			}
		}
	}
	return pluginapi.Unhealthy
}
