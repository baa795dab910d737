package k8s

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// draValues turns Rail's DRA driver on, with two slots per shared port so
// a third sharer is refused.
const draValues = `dra: {enabled: true, sharedSlots: 2}
`

// dnode is one run of the DRA scenario: Rail's driver beside the GPU
// driver stand-in on the RoCE fake machine (its ports are shared macvlan
// devices).
type dnode struct {
	c *cluster
	m *machine
}

// TestRailDRADriver: the chart with dra.enabled on a real node; the real
// kube-scheduler allocates Rail's devices (aligned with GPUs of the
// NVIDIA-shaped stand-in by pcieRoot, shared by consumable capacity,
// avoiding tainted ports) and the kubelet prepares them; Rail attaches
// exactly the claimed port and writes the claim's status.
func TestRailDRADriver(t *testing.T) {
	n, ok := startDRANode(t, fakeMachine+"-roce", roceMachine(t))
	if !ok {
		return
	}
	t.Run("a GPU and a Rail NIC aligned by pcieRoot", n.aligned)
	t.Run("two pods share a 2-slot port, a third waits for a slot", n.shared)
	t.Run("a port set down is avoided, and comes back", n.portDown)
	t.Run("a pod without claims works as before", n.withoutClaims)
	t.Run("scheduling to Running: DRA pod and device-plugin pod", n.timing)
}

// startDRANode starts the rig's node on the fake machine host (named
// name), installs the chart with dra.enabled and starts the GPU driver
// stand-in, which serves until the test ends; false when the install
// failed (its subtest says why).
func startDRANode(t *testing.T, name string, host fakesys.Host) (*dnode, bool) {
	t.Helper()
	c := requireCluster(t)
	work, err := os.MkdirTemp("/tmp", "rail-k8s-dra-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	n := &dnode{c: c, m: newMachineOf(t, work, name, host)}
	conflist := filepath.Join(work, "10-rail-k8s.conflist")
	if err := os.WriteFile(conflist, []byte(readFile(filepath.Join(c.here, "primary.conflist.in"))), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rig: node up in %v", c.start(t, conflist).Round(10*time.Millisecond))
	c.kubectlApply(t, namespace(e2eNamespace))
	if !t.Run("install with dra.enabled", n.install) {
		return nil, false
	}
	c.startDRADriver(t, n.m, "gpu.nvidia.com", "--gpus")
	return n, true
}

func (n *dnode) install(t *testing.T) {
	c := n.c
	values := filepath.Join(t.TempDir(), "values-dra.yaml")
	if err := os.WriteFile(values, []byte(draValues), 0o644); err != nil {
		t.Fatal(err)
	}
	c.helmInstallFiles(t, c.importImage(t), c.rigValues(t, n.m, t.TempDir()), values)
	waitFor(t, "Rail's ResourceSlice", 2*time.Minute, func() bool { return len(n.railDevices(t)) == 4 })
	c.kubectlApply(t, gpuClass)
	for name, d := range n.railDevices(t) {
		if !d.shared() || d.root() == "" || len(d.Taints) != 0 {
			t.Errorf("Rail device %s: shared %v, pcieRoot %q, taints %v: want a shared, untainted port with its root", name, d.shared(), d.root(), d.Taints)
		}
	}
}

// gpuClass is the DeviceClass NVIDIA's driver installs, for the stand-in.
const gpuClass = `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
    - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
`

// aligned: one GPU and one Rail NIC under the same pcieRoot, chosen by the
// scheduler; Rail attaches exactly that port and writes the claim status.
func (n *dnode) aligned(t *testing.T) {
	c := n.c
	c.kubectlApply(t, joinDocs(alignedTemplate, claimPod("aligned", "gpu-nic-aligned")))
	defer n.deletePods(t, "aligned")
	p := c.runningPod(t, "aligned")
	claim := n.podClaim(t, p.Name)
	gpu, nic := claim.allocated("gpu.nvidia.com"), claim.allocated("rail.dev")
	if len(gpu) != 1 || len(nic) != 1 {
		t.Fatalf("claim %s allocated GPUs %v and Rail devices %v: want one each", claim.Metadata.Name, gpu, nic)
	}
	gpuRoot, rail := n.gpuRoot(t, gpu[0]), n.railDevices(t)[nic[0]]
	if gpuRoot == "" || rail.root() != gpuRoot {
		t.Errorf("the scheduler gave GPU %s (root %q) and Rail device %s (root %q): want the same root", gpu[0], gpuRoot, nic[0], rail.root())
	}
	n.checkAttached(t, p, claim, nic[0])
}

// checkAttached: the pod has one rail interface with the lease of exactly
// the claimed port, and the claim's status names it with both conditions.
func (n *dnode) checkAttached(t *testing.T, p pod, claim resourceClaim, device string) {
	t.Helper()
	c := n.c
	want := n.railDevices(t)[device].rdmaDevice()
	leases := podLeases(c.leases(t), p.Name)
	if len(leases) != 1 || len(leases[0].NICs) != 1 || leases[0].NICs[0] != want {
		t.Fatalf("%s: leases %+v, want one on %s (claimed device %s)", p.Name, leases, want, device)
	}
	links := c.railLinks(t, p.Name)
	if len(links) != 1 || !strings.Contains(fmt.Sprint(links), leaseIP(leases[0])) {
		t.Errorf("%s: rail interfaces %v, want one with %s", p.Name, links, leases[0].Address)
	}
	n.kernelGIDs(t)
	var st deviceStatus
	waitFor(t, "the claim's status.devices entry of "+device, 2*time.Minute, func() bool {
		st = n.claim(t, claim.Metadata.Name).status("rail.dev", device)
		return st.NetworkData.InterfaceName != "" && st.condition("Ready") == "True" && st.condition("rail.dev/RDMAReady") == "True"
	})
	if _, ok := links[st.NetworkData.InterfaceName]; !ok || len(st.NetworkData.IPs) != 1 ||
		!strings.HasPrefix(st.NetworkData.IPs[0], leaseIP(leases[0])+"/") || st.NetworkData.HardwareAddress == "" {
		t.Errorf("claim %s status.devices %s networkData %+v: want the pod's %v, address %s, a MAC", claim.Metadata.Name, device, st.NetworkData, links, leases[0].Address)
	}
	t.Logf("%s: %s on %s (%s), claim status %+v", p.Name, device, want, leases[0].Address, st.NetworkData)
}

// shared: two claims take the two slots of one port, a third waits with
// the scheduler's reason until a sharer goes.
func (n *dnode) shared(t *testing.T) {
	c := n.c
	const port = "mlx5_2"
	c.kubectlApply(t, joinDocs(sharedTemplate(port), claimPod("share-a", portTemplate(port)), claimPod("share-b", portTemplate(port))))
	defer n.deletePods(t, "share-a", "share-b", "share-c")
	a, b := c.runningPod(t, "share-a"), c.runningPod(t, "share-b")
	addrs := map[string]bool{}
	for _, p := range []pod{a, b} {
		claim := n.podClaim(t, p.Name)
		nic := claim.allocated("rail.dev")
		if len(nic) != 1 || n.railDevices(t)[nic[0]].rdmaDevice() != port {
			t.Fatalf("%s: Rail devices %v, want the one of %s", p.Name, nic, port)
		}
		n.checkAttached(t, p, claim, nic[0])
		for _, l := range podLeases(c.leases(t), p.Name) {
			addrs[l.Address] = true
		}
	}
	if len(addrs) != 2 {
		t.Errorf("the sharers' addresses %v: want two of their own", addrs)
	}
	c.kubectlApply(t, claimPod("share-c", portTemplate(port)))
	msg := n.unschedulable(t, "share-c")
	t.Logf("share-c Pending: %s", msg)
	n.deletePods(t, "share-a")
	c3 := c.runningPod(t, "share-c")
	n.checkAttached(t, c3, n.podClaim(t, c3.Name), n.podClaim(t, c3.Name).allocated("rail.dev")[0])
}

// unschedulable waits for the pod's PodScheduled condition to say the
// scheduler cannot place it for its claims, and returns the message.
func (n *dnode) unschedulable(t *testing.T, name string) string {
	t.Helper()
	var msg string
	waitFor(t, name+" unschedulable for its claim", time.Minute, func() bool {
		var p struct {
			Status struct {
				Phase      string `json:"phase"`
				Conditions []struct{ Type, Status, Reason, Message string }
			} `json:"status"`
		}
		n.c.getJSON(t, &p, "pod", "-n", e2eNamespace, name)
		for _, cond := range p.Status.Conditions {
			if cond.Type == "PodScheduled" && cond.Status == "False" && cond.Reason == "Unschedulable" {
				msg = cond.Message
				return p.Status.Phase == "Pending"
			}
		}
		return false
	})
	if !strings.Contains(msg, "claim") {
		t.Errorf("%s: PodScheduled message %q does not name the claims", name, msg)
	}
	// still so after the scheduler's retries
	time.Sleep(5 * time.Second)
	if ph := n.c.kubectl(t, "get", "pod", "-n", e2eNamespace, name, "-o", "jsonpath={.status.phase}"); ph != "Pending" {
		t.Errorf("%s is %s, want Pending while the port has no slot", name, ph)
	}
	return msg
}

// portDown: the port's state DOWN in the fake machine taints its device; a
// claim asking for that port waits, one asking any port gets another; the
// port ACTIVE again lifts the taint and the waiting pod runs on it.
func (n *dnode) portDown(t *testing.T) {
	c := n.c
	const port = "mlx5_0"
	setPort := func(s string) {
		if err := fakesys.SetPortState(n.m.root, port, 1, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { setPort("ACTIVE") })
	setPort("DOWN")
	var device string
	took := waitFor(t, port+"'s device tainted rail.dev/port-down", 2*time.Minute, func() bool {
		for name, d := range n.railDevices(t) {
			if d.rdmaDevice() == port && d.tainted("rail.dev/port-down") {
				device = name
				return true
			}
		}
		return false
	})
	t.Logf("%s DOWN: device %s tainted within %v", port, device, took.Round(100*time.Millisecond))
	c.kubectlApply(t, joinDocs(sharedTemplate(port), anyPortTemplate, claimPod("down", portTemplate(port)), claimPod("anyport", "any-port")))
	defer n.deletePods(t, "down", "anyport")
	any := c.runningPod(t, "anyport")
	if nic := n.podClaim(t, any.Name).allocated("rail.dev"); len(nic) != 1 || nic[0] == device {
		t.Errorf("a claim for any port got %v while %s is down", nic, device)
	}
	t.Logf("down Pending: %s", n.unschedulable(t, "down"))
	setPort("ACTIVE")
	p := c.runningPod(t, "down")
	n.checkAttached(t, p, n.podClaim(t, p.Name), device)
}

// withoutClaims: a pod without claims and without GPUs gets no rail
// interface and no lease; a device-plugin GPU pod still gets its NIC from
// placement, beside the DRA driver.
func (n *dnode) withoutClaims(t *testing.T) {
	c := n.c
	c.kubectlApply(t, joinDocs(plainPod("plain-dra"), gpuDeployment("gpu-dp", 2)))
	defer n.deletePods(t, "plain")
	defer c.kubectl(t, "delete", "-n", e2eNamespace, "deployment/gpu-dp", "--wait", "--timeout=2m")
	p := c.runningPod(t, "plain")
	if links := c.railLinks(t, p.Name); len(links) != 0 {
		t.Errorf("%s got rail interfaces %v", p.Name, links)
	}
	if l := podLeases(c.leases(t), p.Name); len(l) != 0 {
		t.Errorf("%s got leases %+v", p.Name, l)
	}
	g := c.runningPod(t, "gpu-dp")
	if l := podLeases(c.leases(t), g.Name); len(l) == 0 || len(c.railLinks(t, g.Name)) == 0 {
		t.Errorf("device-plugin GPU pod %s: leases %+v: want its NIC as before", g.Name, l)
	}
}

// timing: kubectl apply -> Running for a 1-GPU pod whose GPU and NIC come
// from a claim, and for a 1-GPU device-plugin pod whose NIC Rail places,
// one at a time (figures only: the rig shares its CPUs).
func (n *dnode) timing(t *testing.T) {
	c := n.c
	c.kubectlApply(t, alignedTemplate)
	const count = 5
	measure := func(label string, manifest func(name string) string) startup {
		var took []time.Duration
		for i := range count {
			name := fmt.Sprintf("%s-%d", label, i)
			t0 := time.Now()
			c.kubectlApply(t, manifest(name))
			waitFor(t, name+" to run", 3*time.Minute, func() bool {
				out, err := c.kubectlErr("get", "pod", "-n", e2eNamespace, name, "-o", "jsonpath={.status.phase}")
				return err == nil && out == "Running"
			})
			took = append(took, time.Since(t0))
			n.deletePods(t, name)
		}
		s := summarize(took)
		t.Logf("%s: %d pods one at a time, kubectl apply -> Running: median %v, p90 %v", label, count, s.median, s.p90)
		return s
	}
	dra := measure("t-dra", func(name string) string { return claimPod(name, "gpu-nic-aligned") })
	dp := measure("t-dp", func(name string) string { return gpuPod(name, 1) })
	t.Logf("1 GPU + 1 NIC, apply -> Running: DRA claim median %v p90 %v; device plugin + Rail placement median %v p90 %v",
		dra.median, dra.p90, dp.median, dp.p90)
}

// deletePods deletes the pods labelled app=<name> and waits until gone.
func (n *dnode) deletePods(t *testing.T, apps ...string) {
	t.Helper()
	for _, app := range apps {
		n.c.kubectl(t, "delete", "pods", "-n", e2eNamespace, "-l", "app="+app, "--ignore-not-found", "--wait=true", "--timeout=2m")
	}
}
