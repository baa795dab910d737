package vm

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
)

const (
	podNamespace = "rail-vm"
	sleepForever = "trap 'exit 0' TERM; while true; do sleep 1; done"
)

// pod is one CRI pod sandbox of the guest node.
type pod struct {
	node   *guestNode
	name   string
	id     string
	config string // the PodSandboxConfig file crictl reads
}

// podConfig writes a PodSandboxConfig as crictl reads it.
func (n *guestNode) podConfig(t *testing.T, name string, annotations map[string]string) string {
	t.Helper()
	cfg := map[string]any{
		"metadata":      map[string]any{"name": name, "namespace": podNamespace, "uid": name + "-" + filepath.Base(n.work)},
		"log_directory": filepath.Join(n.work, "logs", name),
		"annotations":   annotations,
		"linux":         map[string]any{},
	}
	return harness.WriteJSON(t, n.work, "pod-"+name+".json", cfg)
}

// runPod runs a pod sandbox (the CNI chain runs for it) and returns it, or
// the runtime's error.
func (n *guestNode) runPod(t *testing.T, name string, annotations map[string]string) (*pod, error) {
	t.Helper()
	p := &pod{node: n, name: name, config: n.podConfig(t, name, annotations)}
	t0 := time.Now()
	id, err := n.crictl("runp", p.config)
	if err != nil {
		return nil, err
	}
	p.id = id
	t.Logf("runp %s: %v", name, time.Since(t0))
	return p, nil
}

// mustRunPod is runPod that fails the test on error.
func (n *guestNode) mustRunPod(t *testing.T, name string, annotations map[string]string) *pod {
	t.Helper()
	p, err := n.runPod(t, name, annotations)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stop stops the pod: NRI's StopPodSandbox, then CNI DEL.
func (p *pod) stop(t *testing.T) {
	t.Helper()
	p.node.mustCrictl(t, "stopp", p.id)
}

// remove removes the stopped pod (NRI's RemovePodSandbox, its netns).
func (p *pod) remove(t *testing.T) {
	t.Helper()
	p.node.mustCrictl(t, "rmp", p.id)
}

// startContainer creates and starts a container of image that sleeps.
func (p *pod) startContainer(t *testing.T, name, image string) string {
	t.Helper()
	ctr := harness.WriteJSON(t, p.node.work, "ctr-"+p.name+"-"+name+".json", map[string]any{
		"metadata": map[string]any{"name": name},
		"image":    map[string]any{"image": image},
		"command":  []string{"/bin/sh", "-c", sleepForever},
		"log_path": name + ".log",
		"linux":    map[string]any{},
	})
	t0 := time.Now()
	id := p.node.mustCrictl(t, "create", p.id, ctr, p.config)
	p.node.mustCrictl(t, "start", id)
	t.Logf("create+start %s/%s: %v", p.name, name, time.Since(t0))
	return id
}

// removeContainer stops and removes a container of the pod at once (every
// container still there when the pod stops is stopped within the same CRI
// call as the CNI DEL, which under TCG can outlast crictl's timeout).
func (p *pod) removeContainer(t *testing.T, id string) {
	t.Helper()
	p.node.mustCrictl(t, "rm", "-f", id)
}

// exec runs a command in a container and returns its output.
func (n *guestNode) exec(ctr string, args ...string) (string, error) {
	return n.crictl(append([]string{"exec", ctr}, args...)...)
}

// mustExec is exec that fails the test on error.
func (n *guestNode) mustExec(t *testing.T, ctr string, args ...string) string {
	t.Helper()
	out, err := n.exec(ctr, args...)
	if err != nil {
		t.Fatalf("in the container: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// netnsPath is the pod's network namespace, from crictl inspectp.
func (p *pod) netnsPath(t *testing.T) string {
	t.Helper()
	out := p.node.mustCrictl(t, "inspectp", "-o", "go-template", "--template",
		`{{range .info.runtimeSpec.linux.namespaces}}{{if eq .type "network"}}{{.path}}{{end}}{{end}}`, p.id)
	if out == "" {
		t.Fatalf("pod %s has no netns path", p.name)
	}
	return out
}

// leasesOf lists the leases raild holds for the pod.
func (p *pod) leasesOf(t *testing.T) []leaseInfo {
	t.Helper()
	var found []leaseInfo
	for _, l := range p.node.leases(t) {
		if l.Sandbox == p.id {
			found = append(found, leaseInfo{nics: l.NICs, address: l.Address, mode: string(l.Mode), ifName: l.IfName})
		}
	}
	return found
}

// leaseOf returns the pod's only lease, failing the test otherwise.
func (p *pod) leaseOf(t *testing.T) leaseInfo {
	t.Helper()
	found := p.leasesOf(t)
	if len(found) != 1 {
		t.Fatalf("pod %s holds %d leases, want 1: %+v", p.name, len(found), found)
	}
	return found[0]
}

type leaseInfo struct {
	nics    []string
	address string
	mode    string
	ifName  string
}

func (l leaseInfo) String() string {
	return fmt.Sprintf("%s %s on %v (%s)", l.ifName, l.address, l.nics, l.mode)
}
