package fabric

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// The node's paths in its guest (guest/node.sh).
const (
	nodeDir     = "/run/fabric-node"
	raildSocket = nodeDir + "/raild.sock"
	criRun      = nodeDir + "/cri"
	podNS       = "fabric"
)

// nic is one of a node's two NICs, by its rail.
type nic struct {
	rail           int
	name, mac, pci string
}

// node is one guest run as a node: containerd + NRI + runc, raild on the
// guest's real sysfs with two GPU stand-ins in its PCIe tree, the CNI chain
// ptp → rail, pods from crictl (guest/node.sh).
type node struct {
	*guest
	r    *rig
	host string // the guest's hostname, raild's node name
	nics [2]nic
}

// newNode reads which NIC is which (guest/agent writes nics.txt; run.sh
// gives NIC r of node i the MAC 52:54:00:fa:0i:0r).
func (r *rig) newNode(t *testing.T, name string) *node {
	t.Helper()
	n := &node{guest: &guest{name: name, dir: filepath.Join(r.run, name)}, r: r, host: "fabric-" + name}
	lines := strings.Split(strings.TrimSpace(n.read("nics.txt")), "\n")
	seen := 0
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 || !strings.HasPrefix(f[0], "52:54:00:fa:") {
			continue
		}
		rail, err := strconv.Atoi(f[0][len(f[0])-1:])
		if err != nil || rail > 1 {
			continue
		}
		n.nics[rail] = nic{rail: rail, mac: f[0], name: f[1], pci: f[2]}
		seen++
	}
	if seen != 2 {
		t.Fatalf("node %s: want two wire NICs in nics.txt, got:\n%s", name, n.read("nics.txt"))
	}
	return n
}

// nodeConfig is what both nodes share, as one ConfigMap would give them:
// pools with a disjoint slice of each subnet per node.
type nodeConfig struct {
	mode     api.Mode // the conflist's rail mode
	softRoCE bool
}

// poolSlices are the pools of the rig: rail0 and rail1 bound to their rail
// (rails from the GPUs' affinity: GPU 0's NIC is rail 0), and flat, one
// subnet for both rails, which a pod picks with rail.dev/pool.
var poolSubnets = []struct {
	name, prefix string // prefix: the subnet's first three octets
	rail         string // "" for none
}{
	{"rail0", "10.77.0", "0"},
	{"rail1", "10.77.1", "1"},
	{"flat", "10.78.0", ""},
}

// raildYAML is raild's configuration (both nodes read the same file).
func (c nodeConfig) raildYAML() string {
	var b strings.Builder
	b.WriteString("cooldown: \"0s\"\n")
	if c.softRoCE {
		b.WriteString("softRoCE: true\n")
	}
	b.WriteString("pools:\n")
	for _, p := range poolSubnets {
		fmt.Fprintf(&b, "- name: %s\n  subnet: %s.0/24\n", p.name, p.prefix)
		if p.rail != "" {
			fmt.Fprintf(&b, "  rail: %s\n", p.rail)
		}
		fmt.Fprintf(&b, "  nodes:\n  - {node: fabric-a, ranges: [{start: %[1]s.10, end: %[1]s.99}]}\n  - {node: fabric-b, ranges: [{start: %[1]s.110, end: %[1]s.199}]}\n", p.prefix)
	}
	fmt.Fprintf(&b, "nri:\n  enabled: true\n  socket: %s/nri/nri.sock\n  memlock: \"64Mi\"\n", criRun)
	return b.String()
}

// conflist is the node's CNI chain: ptp for the pod's primary address,
// then rail in mode.
func conflist(mode api.Mode) []byte {
	b, _ := json.Marshal(map[string]any{
		"cniVersion": "1.1.0", "name": "rail-fabric",
		"plugins": []any{
			map[string]any{"type": "ptp", "ipMasq": false, "ipam": map[string]any{
				"type": "host-local", "dataDir": nodeDir + "/host-local",
				"ranges": [][]map[string]string{{{"subnet": "10.249.0.0/24"}}}}},
			map[string]any{"type": "rail", "socket": raildSocket, "mode": mode,
				"capabilities": map[string]bool{"io.kubernetes.cri.pod-annotations": true}},
		},
	})
	return b
}

// startNodes starts both nodes at once (their guests are busy for a minute
// each under TCG); cleanups stop them.
func startNodes(t *testing.T, c nodeConfig, image string, nodes ...*node) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]string, len(nodes))
	for i, n := range nodes {
		env := fmt.Sprintf("BIN=%s\nCRI=%s\nRAIL_RIG_CACHE=%s\nIMAGE=%s\n", shellQuote(n.r.bin),
			shellQuote(filepath.Join(n.r.repo, "integration/cri")), shellQuote(filepath.Dir(n.r.criRig)), n.guestPath(image))
		n.write(t, "node.env", []byte(env))
		n.write(t, "node/raild.yaml", []byte(c.raildYAML()))
		n.write(t, "node/10-rail.conflist", conflist(c.mode))
		t.Cleanup(func() { n.stop(t) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			out, rc, err := n.try("start the node", 5*time.Minute, fmt.Sprintf("set -e\nbash %s bind %s\nbash %s start",
				n.script("gpus.sh"), n.name, n.script("node.sh")))
			switch {
			case err != nil:
				errs[i] = err.Error()
			case rc != 0:
				errs[i] = fmt.Sprintf("node %s: start: exit code %d\n%s\nraild's log:\n%s", n.name, rc, out, lastLines(n.read("raild.log"), 30))
			default:
				t.Logf("node %s: GPU stand-ins, containerd + raild up, image imported in %v:\n%s", n.name, time.Since(t0).Round(time.Second), out)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
}

// stop removes every pod (CNI DEL), stops containerd and raild and takes
// the GPU stand-ins away.
func (n *node) stop(t *testing.T) {
	t.Helper()
	out, rc, err := n.try("stop the node", 3*time.Minute, fmt.Sprintf("bash %s stop; bash %s unbind", n.script("node.sh"), n.script("gpus.sh")))
	if err != nil || rc != 0 {
		t.Errorf("node %s: stop: %v (exit %d)\n%s", n.name, err, rc, out)
	}
	if t.Failed() {
		t.Logf("node %s: raild's log:\n%s", n.name, lastLines(n.read("raild.log"), 60))
		t.Logf("node %s: containerd's log:\n%s", n.name, lastLines(n.read("containerd.log"), 30))
	}
}

// script is a file of guest/, at its host path (the guest's / is the host's).
func (n *node) script(name string) string {
	return filepath.Join(n.r.repo, "integration/fabric/guest", name)
}

// crictl is the command line of the node's crictl.
func (n *node) crictl() string {
	return fmt.Sprintf("%s --config %s/crictl.yaml", filepath.Join(n.r.criRig, "bin/crictl"), criRun)
}

// raild is the command line of the node's raild CLI.
func (n *node) raild() string { return filepath.Join(n.r.bin, "raild") }

// setMode rewrites the conflist containerd serves (it reloads its CNI
// configuration on change) so that the next pods get mode.
func (n *node) setMode(t *testing.T, mode api.Mode) {
	t.Helper()
	src := n.write(t, "node/10-rail.conflist", conflist(mode))
	n.run(t, "switch the conflist to "+string(mode), time.Minute,
		fmt.Sprintf("cp %s %s/cni/net.d/.10-rail.conflist.tmp && mv %[2]s/cni/net.d/.10-rail.conflist.tmp %[2]s/cni/net.d/10-rail.conflist && sleep 2", src, criRun))
}

// leases asks raild for every lease of the node.
func (n *node) leases(t *testing.T) []api.Lease {
	t.Helper()
	out := n.run(t, "raild leases", time.Minute, fmt.Sprintf("%s leases --socket %s --json", n.raild(), raildSocket))
	var leases []api.Lease
	if err := json.Unmarshal([]byte(out), &leases); err != nil {
		t.Fatalf("node %s: raild leases --json: %v\n%s", n.name, err, out)
	}
	return leases
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
