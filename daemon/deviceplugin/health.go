package deviceplugin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// portState reads <root>/sys/class/infiniband/<nic>/ports/<port>/state,
// which holds e.g. "4: ACTIVE".
func portState(root, nic string, port int) (string, error) {
	raw, err := os.ReadFile(filepath.Join(root, "sys/class/infiniband", nic, "ports", strconv.Itoa(port), "state"))
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(raw))
	if _, name, ok := strings.Cut(s, ":"); ok {
		s = strings.TrimSpace(name)
	}
	return s, nil
}

// health is Healthy when at least one of the resource's NICs has an
// ACTIVE port: a pod given the resource can then reach some rail.
func (r *resource) health(root string) string {
	for _, n := range r.nics {
		for _, p := range n.ports {
			if st, err := portState(root, n.name, p); err == nil && st == "ACTIVE" {
				return pluginapi.Healthy
			}
		}
	}
	return pluginapi.Unhealthy
}
