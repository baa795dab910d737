package deviceplugin

import (
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/pkg/topology"
)

// health is Healthy when at least one of the resource's NICs has an
// ACTIVE port now: a pod given the resource can then reach some rail.
func (r *resource) health(ports *topology.PortReader) string {
	for _, n := range r.nics {
		for _, p := range n.ports {
			if st, err := ports.State(n.device, p); err == nil && st == "ACTIVE" {
				return pluginapi.Healthy
			}
		}
	}
	return pluginapi.Unhealthy
}
