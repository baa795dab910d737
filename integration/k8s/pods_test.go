package k8s

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// pod is what the test reads back about one running pod.
type pod struct {
	Name, IP, UID string
}

// runningPod waits until the app's pod runs and returns it.
func (c *cluster) runningPod(t *testing.T, app string) pod {
	t.Helper()
	var p pod
	waitFor(t, "pod of "+app+" to run", 3*time.Minute, func() bool {
		out, err := c.kubectlErr("get", "pods", "-n", e2eNamespace, "-l", "app="+app, "-o",
			`jsonpath={range .items[?(@.status.phase=="Running")]}{.metadata.name} {.status.podIP} {.metadata.uid}{"\n"}{end}`)
		if err != nil || out == "" {
			return false
		}
		lines := strings.Split(out, "\n")
		if len(lines) != 1 {
			return false
		}
		f := strings.Fields(lines[0])
		if len(f) != 3 {
			return false
		}
		p = pod{Name: f[0], IP: f[1], UID: f[2]}
		return true
	})
	return p
}

// exec runs a shell command in the pod's first container.
func (c *cluster) exec(t *testing.T, podName, script string) string {
	t.Helper()
	out, err := c.kubectlErr("exec", "-n", e2eNamespace, podName, "--", "sh", "-c", script)
	if err != nil {
		t.Fatalf("exec in %s: %q: %v", podName, script, err)
	}
	return out
}

// leases asks raild, through kubectl exec into its pod, for its leases.
func (c *cluster) leases(t *testing.T) []api.Lease {
	t.Helper()
	out := c.kubectl(t, "exec", "-n", railNamespace, "ds/raild", "-c", "raild", "--", "raild", "leases", "--json")
	var leases []api.Lease
	if err := json.Unmarshal([]byte(out), &leases); err != nil {
		t.Fatalf("raild leases --json: %v\n%s", err, out)
	}
	return leases
}

// podLeases returns the leases of one pod (by name).
func podLeases(all []api.Lease, podName string) []api.Lease {
	var out []api.Lease
	for _, l := range all {
		if l.PodNamespace == e2eNamespace && l.PodName == podName {
			out = append(out, l)
		}
	}
	return out
}

// railLinks lists the pod's interfaces named rail*, with their IPv4 addresses.
func (c *cluster) railLinks(t *testing.T, podName string) map[string]string {
	t.Helper()
	out := c.exec(t, podName, "ip -o -4 addr show")
	links := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.HasPrefix(f[1], "rail") {
			links[f[1]] = f[3]
		}
	}
	if all := c.exec(t, podName, "ls /sys/class/net"); strings.Contains(all, "rail") {
		for _, name := range strings.Fields(all) {
			if _, ok := links[name]; !ok && strings.HasPrefix(name, "rail") {
				links[name] = ""
			}
		}
	}
	return links
}

// httpGet fetches http://addr:8000/ from the host.
func httpGet(addr string) (string, error) {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://%s:8000/", addr))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(body)), err
}
