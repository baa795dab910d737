package fabric

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// pod is a crictl pod on a node with one container of engineImage that
// sleeps; the tests run their programs in it with crictl exec, so every
// program sees exactly the container's devices, limits and environment.
type pod struct {
	n         *node
	name      string
	id, ctr   string
	leases    []api.Lease // by interface name
	removed   bool
	container string
}

// runPod runs a pod with annotations (the CNI chain runs for it) and starts
// its container; a cleanup removes it.
func (n *node) runPod(t *testing.T, name string, annotations map[string]string) *pod {
	t.Helper()
	p := &pod{n: n, name: name, container: "engine"}
	podJSON, _ := json.Marshal(map[string]any{
		"metadata":      map[string]any{"name": name, "namespace": podNS, "uid": name + "-uid"},
		"log_directory": nodeDir + "/logs/" + name,
		"annotations":   annotations,
		"linux":         map[string]any{},
	})
	ctrJSON, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"name": p.container},
		"image":    map[string]any{"image": engineImage},
		"command":  []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"},
		"log_path": p.container + ".log",
		"linux":    map[string]any{},
	})
	podFile := n.write(t, "pods/"+name+".json", podJSON)
	ctrFile := n.write(t, "pods/"+name+"-ctr.json", ctrJSON)
	t0 := time.Now()
	out := n.run(t, "run pod "+name, 3*time.Minute, fmt.Sprintf(`set -e
pod=$(%[1]s runp %[2]s)
ctr=$(%[1]s create "$pod" %[3]s %[2]s)
%[1]s start "$ctr" >/dev/null
echo "$pod $ctr"`, n.crictl(), podFile, ctrFile))
	lines := strings.Split(strings.TrimSpace(out), "\n") // crictl's warnings come first
	f := strings.Fields(lines[len(lines)-1])
	if len(f) != 2 {
		t.Fatalf("node %s: pod %s: want sandbox and container ids, got %q", n.name, name, out)
	}
	p.id, p.ctr = f[0], f[1]
	t.Cleanup(func() { p.remove(t) })
	t.Logf("node %s: pod %s up in %v", n.name, name, time.Since(t0).Round(100*time.Millisecond))
	for _, l := range n.leases(t) {
		if l.Sandbox == p.id {
			p.leases = append(p.leases, l)
		}
	}
	slices.SortFunc(p.leases, func(a, b api.Lease) int { return strings.Compare(a.IfName, b.IfName) })
	return p
}

// remove stops and removes the pod (CNI DEL); once only.
func (p *pod) remove(t *testing.T) {
	t.Helper()
	if p.removed {
		return
	}
	p.removed = true
	p.n.run(t, "remove pod "+p.name, 3*time.Minute, fmt.Sprintf("%[1]s stopp %[2]s >/dev/null && %[1]s rmp %[2]s >/dev/null", p.n.crictl(), p.id))
}

// key is the pod's namespace/name.
func (p *pod) key() string { return podNS + "/" + p.name }

// lease is the pod's lease of interface ifname.
func (p *pod) lease(t *testing.T, ifname string) api.Lease {
	t.Helper()
	for _, l := range p.leases {
		if l.IfName == ifname {
			return l
		}
	}
	t.Fatalf("node %s: pod %s has no lease for %s (leases: %+v)", p.n.name, p.name, ifname, p.leases)
	return api.Lease{}
}

// addr is the rail address of interface ifname.
func (p *pod) addr(t *testing.T, ifname string) netip.Addr {
	t.Helper()
	pfx, err := netip.ParsePrefix(p.lease(t, ifname).Address)
	if err != nil {
		t.Fatalf("pod %s: lease address %q: %v", p.name, p.lease(t, ifname).Address, err)
	}
	return pfx.Addr()
}

// execScript is the guest's command that runs script in the container.
func (p *pod) execScript(script string) string {
	return fmt.Sprintf("%s exec %s sh -c %s", p.n.crictl(), p.ctr, shellQuote(script))
}

// exec runs script in the container; it must succeed.
func (p *pod) exec(t *testing.T, what string, timeout time.Duration, script string) string {
	t.Helper()
	return p.n.run(t, p.name+": "+what, timeout, p.execScript(script))
}

// env is the container's environment, as its processes see it.
func (p *pod) env(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, l := range strings.Split(p.exec(t, "env", time.Minute, "env"), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	return env
}
