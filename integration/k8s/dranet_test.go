package k8s

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// draClaimed is the NIC the DRANet-shaped claim takes: the one closest to
// GPUs 6 and 7, which prefill and decode leave free.
const draClaimed = "mlx5_3"

// draNet: a pod whose RDMA NIC comes from a claim of the test DRA NIC
// driver (integration/cmd/fake-dra-nic-driver: DRANet-shaped slices, a real
// kubelet DRA plugin that moves and injects nothing) gets from raild
// memlock and NCCL_IB_HCA/UCX_NET_DEVICES naming exactly that NIC, no
// device node, no rail interface and no lease. While the claim holds the
// NIC, a pod given the GPUs closest to it gets another NIC; the pods go
// again before the next step, which needs every NIC free.
func (n *node) draNet(t *testing.T) {
	c := n.c
	c.startDRADriver(t, n.m, "dra.net")
	c.kubectlApply(t, draNetManifests(draClaimed))
	defer func() {
		c.kubectl(t, "delete", "--ignore-not-found", "--wait", "--timeout=2m", "-n", e2eNamespace,
			"deployment/near", "pod/dranet", "resourceclaim/dranet-nic")
		c.kubectl(t, "wait", "--for=delete", "pod", "-l", "app=near", "-n", e2eNamespace, "--timeout=2m")
		c.kubectl(t, "delete", "--ignore-not-found", "--wait", "deviceclass/rail-test-rdma")
	}()
	p := c.runningPod(t, "dranet")
	if got := c.exec(t, p.Name, "echo $NCCL_IB_HCA $UCX_NET_DEVICES"); got != "="+draClaimed+" "+draClaimed+":1" {
		t.Errorf("%s: NCCL_IB_HCA UCX_NET_DEVICES = %q, want =%s %s:1", p.Name, got, draClaimed, draClaimed)
	}
	limits := c.exec(t, p.Name, "grep 'Max locked memory' /proc/self/limits")
	if f := strings.Fields(limits); len(f) < 5 || f[3] != "4194304" || f[4] != "4194304" {
		t.Errorf("%s: memlock %q, want 4194304 (nri.memlock %s)", p.Name, limits, memlock)
	}
	if devs := c.exec(t, p.Name, "ls /dev/infiniband 2>/dev/null | wc -l"); devs != "0" {
		t.Errorf("%s: raild injected %s device nodes; a DRA NIC's are the driver's to inject", p.Name, devs)
	}
	if links := c.railLinks(t, p.Name); len(links) != 0 {
		t.Errorf("%s got rail interfaces %v", p.Name, links)
	}
	if l := podLeases(c.leases(t), p.Name); len(l) != 0 {
		t.Errorf("%s got leases %+v", p.Name, l)
	}
	n.draNetReadiness(t, p.Name)
	// only now: the claim is recorded when its pod's sandbox starts
	c.kubectlApply(t, gpuDeployment("near", 4))
	near := c.runningPod(t, "near")
	var nics []string
	for _, l := range podLeases(c.leases(t), near.Name) {
		nics = append(nics, l.NICs...)
	}
	if len(nics) == 0 || slices.Contains(nics, draClaimed) {
		t.Errorf("the pod given GPUs 4-7 leased %v: want NICs, never %s, which the DRA claim holds", nics, draClaimed)
	}
}

// draNetReadiness: raild checks the DRANet pod like a rail pod and writes
// rail.dev/RDMAReady on it. The test driver moves and injects nothing, so
// the claimed NIC's netdev is not in the pod: False, InterfaceMissing, the
// message naming the driver and the claim; doctor shows the NIC as the
// claim's and the missing uverbs node as the driver's.
func (n *node) draNetReadiness(t *testing.T, name string) {
	c := n.c
	claim := e2eNamespace + "/dranet-nic"
	took := waitFor(t, "the DRANet pod's rail.dev/RDMAReady", time.Minute, func() bool {
		return c.podConditions(t, name)[rdmaReadyType] == [2]string{"False", "InterfaceMissing"}
	})
	t.Logf("%s: RDMAReady False (InterfaceMissing: the test driver moves nothing) within %v", name, took.Round(100*time.Millisecond))
	var p struct {
		Status struct {
			Conditions []struct{ Type, Message string } `json:"conditions"`
		} `json:"status"`
	}
	c.getJSON(t, &p, "pod", "-n", e2eNamespace, name)
	for _, cond := range p.Status.Conditions {
		if cond.Type == rdmaReadyType && !strings.Contains(cond.Message, "the dra.net driver did not move the NIC of claim "+claim) {
			t.Errorf("%s: condition message %q does not name the driver and the claim", name, cond.Message)
		}
	}
	out, err := c.kubectlErr("exec", "-n", railNamespace, "ds/raild", "-c", "raild", "--", "raild", "doctor", "--pod", e2eNamespace+"/"+name)
	for _, want := range []string{"from DRA claim " + claim + " (driver dra.net)", draClaimed + " port 1",
		"device nodes its DRA claims' driver injects: /dev/infiniband/uverbs", "[FAIL] container main device-nodes"} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("raild doctor --pod %s (err %v) lacks %q:\n%s", name, err, want, out)
			break
		}
	}
}

// draNetManifests: a DeviceClass of the driver's RDMA devices, a claim on
// the NIC with that RDMA device, and the pod using it in its container.
func draNetManifests(rdmaDevice string) string {
	return joinDocs(`apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: rail-test-rdma}
spec:
  selectors:
    - cel: {expression: 'device.driver == "dra.net" && device.attributes["dra.net"].rdma == true'}
`, fmt.Sprintf(`apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: dranet-nic, namespace: %[1]s}
spec:
  devices:
    requests:
      - name: nic
        exactly:
          deviceClassName: rail-test-rdma
          selectors:
            - cel: {expression: 'device.attributes["dra.net"].rdmaDevice == "%[2]s"'}
`, e2eNamespace, rdmaDevice), fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: dranet, namespace: %[1]s, labels: {app: dranet}}
spec:
  terminationGracePeriodSeconds: 1
  resourceClaims: [{name: nic, resourceClaimName: dranet-nic}]
  containers:
    - name: main
      image: %[2]s
      imagePullPolicy: Never
      command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
      securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
      resources: {claims: [{name: nic}]}
`, e2eNamespace, busybox))
}
