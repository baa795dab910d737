package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// chainedConflist is the node's CNI chain: upstream ptp (+ host-local) for
// eth0, then rail in the given mode, with the pod-annotations capability so
// containerd passes rail.dev/* annotations.
func chainedConflist(n *guestNode, mode string) map[string]any {
	return map[string]any{
		"cniVersion": "1.1.0", "name": "rail-vm",
		"plugins": []any{
			map[string]any{"type": "ptp", "ipMasq": false, "ipam": map[string]any{
				"type": "host-local", "dataDir": filepath.Join(n.work, "host-local"),
				"ranges": [][]map[string]string{{{"subnet": "10.249.0.0/24"}}}}},
			map[string]any{"type": "rail", "socket": n.socket, "mode": mode,
				"capabilities": map[string]bool{"io.kubernetes.cri.pod-annotations": true}},
		},
	}
}

// raildConfig is raild's configuration: one pool, NRI on the rig's socket
// with memlockKiB.
func raildConfig(n *guestNode, subnet string) string {
	return fmt.Sprintf(`nodeName: rail-vm
cooldown: "0s"
pools:
- name: rail
  subnet: %s
nri:
  enabled: true
  socket: %s
  memlock: "%dKi"
`, subnet, n.nriSocket(), memlockKiB)
}

// assertGone checks that a pod's netns bind mount is gone.
func assertGone(t *testing.T, netnsPath string) {
	t.Helper()
	if _, err := os.Stat(netnsPath); !os.IsNotExist(err) {
		t.Errorf("pod netns %s still there (%v)", netnsPath, err)
	}
}
