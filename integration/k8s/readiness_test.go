package k8s

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// rdmaReadyType is the condition raild writes (daemon/readiness).
const rdmaReadyType = "rail.dev/RDMAReady"

// gated adds a readiness gate on rail.dev/RDMAReady to a workload's pod
// template.
func gated(manifest string) string {
	return strings.Replace(manifest, "    spec:\n      terminationGracePeriodSeconds: 1\n",
		"    spec:\n      terminationGracePeriodSeconds: 1\n      readinessGates: [{conditionType: "+rdmaReadyType+"}]\n", 1)
}

// service is a ClusterIP Service of an app's :8000.
func service(app string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  selector: {app: %[1]s}
  ports: [{port: 8000}]
`, app, e2eNamespace)
}

// podConditions reads a pod's conditions by type: status and reason.
func (c *cluster) podConditions(t *testing.T, name string) map[string][2]string {
	t.Helper()
	var p struct {
		Status struct {
			Conditions []struct{ Type, Status, Reason string } `json:"conditions"`
		} `json:"status"`
	}
	c.getJSON(t, &p, "pod", "-n", e2eNamespace, name)
	out := map[string][2]string{}
	for _, cond := range p.Status.Conditions {
		out[cond.Type] = [2]string{cond.Status, cond.Reason}
	}
	return out
}

// endpointsReady lists the ready endpoints of a Service (its EndpointSlices).
func (c *cluster) endpointsReady(t *testing.T, svc string) []string {
	t.Helper()
	var slices struct {
		Items []struct {
			Endpoints []struct {
				Addresses  []string `json:"addresses"`
				Conditions struct {
					Ready *bool `json:"ready"`
				} `json:"conditions"`
			} `json:"endpoints"`
		} `json:"items"`
	}
	c.getJSON(t, &slices, "endpointslices", "-n", e2eNamespace, "-l", "kubernetes.io/service-name="+svc)
	var out []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				out = append(out, e.Addresses...)
			}
		}
	}
	return out
}

// rdmaReady: the gated prefill pod is Ready and in its Service's endpoints
// only while raild says its RDMA path works; its NIC's port going down (the
// fake machine's port state; no link event tells raild) flips the
// condition, the pod and the endpoints within seconds, with a Warning
// Event and `raild doctor --pod` naming the check; back when the port is.
func (n *node) rdmaReady(t *testing.T) {
	c := n.c
	p := n.gpuPods["prefill"]
	leases := podLeases(c.leases(t), p.Name)
	if len(leases) == 0 || len(leases[0].NICs) == 0 {
		t.Fatalf("%s holds no NIC: %+v", p.Name, leases)
	}
	nic, ifname := leases[0].NICs[0], leases[0].IfName
	c.kubectlApply(t, service("prefill"))
	state := func(want, reason string, ready bool) func() bool {
		return func() bool {
			conds := c.podConditions(t, p.Name)
			podReady := conds["Ready"][0] == "True"
			inEndpoints := strings.Contains(strings.Join(c.endpointsReady(t, "prefill"), " "), p.IP)
			return conds[rdmaReadyType] == [2]string{want, reason} && podReady == ready && inEndpoints == ready
		}
	}
	took := waitFor(t, "prefill RDMA-ready, Ready and in its endpoints", 2*time.Minute, state("True", "RDMAReady", true))
	t.Logf("RDMAReady True, pod Ready and in the endpoints %v after the checks started", took.Round(100*time.Millisecond))

	setPort := func(s string) {
		if err := fakesys.SetPortState(n.m.root, nic, 1, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { setPort("ACTIVE") })
	setPort("DOWN")
	took = waitFor(t, "the condition False, the pod not Ready, out of the endpoints", time.Minute, state("False", "PortNotActive", false))
	t.Logf("port %s DOWN: RDMAReady False, pod not Ready, out of the endpoints within %v", nic, took.Round(100*time.Millisecond))
	events := c.kubectl(t, "get", "events", "-n", e2eNamespace, "--field-selector", "reason=RailRDMADown,involvedObject.name="+p.Name,
		"-o", "jsonpath={.items[*].message}")
	if !strings.Contains(events, nic+" port 1 is DOWN") {
		t.Errorf("RailRDMADown Event: %q", events)
	}
	out, err := c.kubectlErr("exec", "-n", railNamespace, "ds/raild", "-c", "raild", "--", "raild", "doctor", "--pod", e2eNamespace+"/"+p.Name)
	if err == nil || !strings.Contains(out, "[FAIL] "+ifname+" port: "+nic+" port 1 is DOWN, want ACTIVE") ||
		!strings.Contains(out, "device nodes present:") {
		t.Errorf("raild doctor --pod (err %v):\n%s", err, out)
	}

	setPort("ACTIVE")
	took = waitFor(t, "the condition True again", time.Minute, state("True", "RDMAReady", true))
	t.Logf("port back: RDMAReady True, Ready and in the endpoints within %v", took.Round(100*time.Millisecond))
	if out, err := c.kubectlErr("exec", "-n", railNamespace, "ds/raild", "-c", "raild", "--", "raild", "doctor", "--pod",
		e2eNamespace+"/"+p.Name); err != nil || strings.Contains(out, "[FAIL]") {
		t.Errorf("raild doctor --pod after recovery (err %v):\n%s", err, out)
	}
}
