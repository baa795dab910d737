package k8s

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// The Multus scenario's pools: the NADs' default and the two a pod picks.
const multusValues = `cni: {install: nad}
pools:
  - {name: rail, subnet: 10.215.7.0/24}
  - {name: decode, subnet: 10.215.8.0/24}
  - {name: prefill, subnet: 10.215.9.0/24}
`

// vfResource is the resource of nad-rail-vf.yaml, served by a second fake
// device plugin whose device IDs are NIC PCI addresses (as the SR-IOV
// network device plugin reports VFs).
const vfResource = "example.com/rdma_vf"

// requireMultus returns multus-setup.sh's bin dir (multus, macvlan).
func requireMultus(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RAIL_K8S_MULTUS")
	if dir == "" {
		t.Skip("RAIL_K8S_MULTUS is not set: run integration/k8s/run.sh (make test-k8s)")
	}
	return filepath.Join(dir, "bin")
}

// roceMachine is the rig's 8-GPU, 4-NIC machine with its ConnectX-7 in
// Ethernet (RoCE) mode: macvlan children need an Ethernet parent.
func roceMachine(t *testing.T) fakesys.Host {
	t.Helper()
	host, ok := fakesys.Machine(fakeMachine)
	if !ok {
		t.Fatalf("no fake machine %s", fakeMachine)
	}
	for i := range host.Roots {
		toEthernet(host.Roots[i].Ports)
	}
	return host
}

func toEthernet(slots []Slot) {
	for _, s := range slots {
		toEthernet(s.Switch)
		if s.Card != nil {
			for f := range s.Card.Funcs {
				s.Card.Funcs[f].LinkLayer = "Ethernet"
			}
		}
	}
}

// Slot is fakesys's PCIe slot.
type Slot = fakesys.Slot

// multusPrimary is the node's one CNI config: the thin Multus plugin with
// the rig's kubeconfig, delegating the default network to the rig's 0.3.1
// ptp conflist (primary.conflist.in as it is; start-node.sh fills in @RUN@
// and @POD_CIDR@ in both).
func (c *cluster) multusPrimary(t *testing.T, dir string) string {
	t.Helper()
	ptp := json.RawMessage(readFile(filepath.Join(c.here, "primary.conflist.in")))
	if !json.Valid(ptp) {
		t.Fatal("primary.conflist.in is not JSON")
	}
	conf := map[string]any{
		"cniVersion": "0.3.1", "name": "multus-cni-network", "type": "multus",
		"kubeconfig": "@RUN@/kubeconfig", "binDir": "@RUN@/cni/bin", "cniDir": "@RUN@/multus/cache",
		"logFile": "@RUN@/log/multus.log", "logLevel": "verbose", "logToStderr": false,
		"delegates": []json.RawMessage{ptp},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "00-multus.conf")
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// installPlugins puts multus and macvlan into the node's CNI bin dir, where
// containerd finds Multus and Multus its delegates.
func (c *cluster) installPlugins(t *testing.T, from string) {
	t.Helper()
	to := filepath.Join(c.run, "cni/bin")
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"multus", "macvlan"} {
		if out, err := exec.Command("install", "-m", "0755", filepath.Join(from, name), to).CombinedOutput(); err != nil {
			t.Fatalf("install %s: %v\n%s", name, err, out)
		}
	}
}

// applyExample applies a manifest of manifests/examples in the test's
// namespace, with each of replace's keys (which must occur) replaced.
func (c *cluster) applyExample(t *testing.T, name string, replace ...string) {
	t.Helper()
	text := readFile(filepath.Join(c.repo, "manifests/examples", name))
	if text == "" {
		t.Fatalf("manifests/examples/%s is missing or empty", name)
	}
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(text, replace[i]) {
			t.Fatalf("%s has no %q to replace", name, replace[i])
		}
		text = strings.ReplaceAll(text, replace[i], replace[i+1])
	}
	if _, err := c.tool("kubectl", strings.NewReader(text), "apply", "-n", e2eNamespace, "-f", "-"); err != nil {
		t.Fatalf("kubectl apply %s: %v", name, err)
	}
}

// startVFPlugin serves vfResource with the PCI addresses of these NICs as
// device IDs, until the test ends.
func (c *cluster) startVFPlugin(t *testing.T, m *machine, nics ...string) {
	t.Helper()
	var ids []string
	for _, nic := range nics {
		n, ok := m.spec.NIC(nic)
		if !ok || n.PCI == "" {
			t.Fatalf("NIC %s has no PCI address", nic)
		}
		ids = append(ids, n.PCI)
	}
	cmd := exec.Command(c.fakeGPU, "--resource", vfResource, "--ids", strings.Join(ids, ","))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	path := `jsonpath={.items[0].status.allocatable.` + strings.ReplaceAll(vfResource, ".", `\.`) + `}`
	waitFor(t, vfResource+" allocatable", time.Minute, func() bool {
		out, _ := c.kubectlErr("get", "nodes", "-o", path)
		return out == fmt.Sprint(len(ids))
	})
}

// nicsByPCI returns the NICs with these PCI addresses, in that order.
func (m *machine) nicsByPCI(t *testing.T, pcis []string) []string {
	t.Helper()
	var names []string
	for _, pci := range pcis {
		i := slices.IndexFunc(m.spec.NICs, func(n fakesys.NICSpec) bool { return n.PCI == pci })
		if i < 0 {
			t.Fatalf("no NIC at %s", pci)
		}
		names = append(names, m.spec.NICs[i].Name)
	}
	return names
}

// multusPod is a pod attached through Multus to networks (the annotation's
// value), with extra annotations and resource limits (YAML flow maps).
func multusPod(name, networks, annotations, limits string) string {
	if annotations != "" {
		annotations = ", " + annotations
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {app: %[1]s}
  annotations: {k8s.v1.cni.cncf.io/networks: %[3]q%[4]s}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: %[5]s
      imagePullPolicy: Never
      command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
      resources: {limits: {%[6]s}}
`, name, e2eNamespace, networks, annotations, busybox, limits)
}

// networkStatus is one entry of k8s.v1.cni.cncf.io/network-status.
type networkStatus struct {
	Name      string   `json:"name"`
	Interface string   `json:"interface"`
	IPs       []string `json:"ips"`
	Default   bool     `json:"default"`
}

// podNetworkStatus reads the pod's network-status annotation (nil: none).
func (c *cluster) podNetworkStatus(t *testing.T, pod string) []networkStatus {
	t.Helper()
	out := c.kubectl(t, "get", "pod", "-n", e2eNamespace, pod, "-o",
		`jsonpath={.metadata.annotations.k8s\.v1\.cni\.cncf\.io/network-status}`)
	if out == "" {
		return nil // not written (yet)
	}
	var status []networkStatus
	if err := json.Unmarshal([]byte(out), &status); err != nil {
		t.Fatalf("%s: network-status %q: %v", pod, out, err)
	}
	return status
}

// podAddrs lists the pod's interfaces with their IPv4 addresses (CIDR).
func (c *cluster) podAddrs(t *testing.T, pod string) map[string]string {
	t.Helper()
	addrs := map[string]string{}
	for _, line := range strings.Split(c.exec(t, pod, "ip -o -4 addr show"), "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[2] == "inet" {
			addrs[f[1]] = f[3]
		}
	}
	return addrs
}

// deletePod deletes a pod and waits until it is gone.
func (c *cluster) deletePod(t *testing.T, pod string) {
	t.Helper()
	c.kubectl(t, "delete", "pod", "-n", e2eNamespace, pod, "--wait=true", "--timeout=2m")
}
