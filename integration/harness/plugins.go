package harness

import (
	"maps"
	"path/filepath"
)

// PTP is a primary plugin config: upstream ptp (eth0 with its default
// route) and host-local IPAM on subnet, keeping its state in the node dir.
func (n *Node) PTP(subnet string) map[string]any {
	return map[string]any{
		"type":   "ptp",
		"ipMasq": false,
		"ipam": map[string]any{
			"type":    "host-local",
			"subnet":  subnet,
			"routes":  []any{map[string]any{"dst": "0.0.0.0/0"}},
			"dataDir": filepath.Join(n.Dir, "host-local"),
		},
	}
}

// RailPlugin is the rail plugin's config, talking to this node's raild and
// declaring the pod-annotations capability; fields add to or override it.
func (n *Node) RailPlugin(fields map[string]any) map[string]any {
	conf := map[string]any{
		"type":         "rail",
		"socket":       n.Raild.Socket,
		"capabilities": map[string]any{AnnotationsCapability: true},
	}
	maps.Copy(conf, fields)
	return conf
}

// HostLocal is a host-local IPAM config on subnet with its state in the
// node dir (for upstream main plugins).
func (n *Node) HostLocal(subnet string) map[string]any {
	return map[string]any{"type": "host-local", "subnet": subnet, "dataDir": filepath.Join(n.Dir, "host-local")}
}
