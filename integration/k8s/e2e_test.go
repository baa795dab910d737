package k8s

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
)

// node is one prepared run: the cluster, the fake machine, the primary's
// own conflist bytes.
type node struct {
	c        *cluster
	m        *machine
	work     string
	primary  []byte
	gpuPods  map[string]pod // app -> running pod
	railAddr map[string]string
}

func TestKubernetes(t *testing.T) {
	c := requireCluster(t)
	work, err := os.MkdirTemp("/tmp", "rail-k8s-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	n := &node{c: c, work: work, gpuPods: map[string]pod{}, railAddr: map[string]string{}}
	n.m = newMachine(t, work) // registered before the node: its stand-ins go after the pods
	conflist := filepath.Join(work, "10-rail-k8s.conflist")
	if err := os.WriteFile(conflist, []byte(readFile(filepath.Join(c.here, "primary.conflist.in"))), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rig: node up in %v", c.start(t, conflist).Round(10*time.Millisecond))
	if n.primary, err = os.ReadFile(c.conflist(t)); err != nil {
		t.Fatal(err)
	}
	c.kubectlApply(t, namespace(e2eNamespace))

	without := n.measureStartup(t, "bare", 20)
	// Each step needs the one before: stop at the first that fails.
	if !t.Run("install with the Helm chart", n.install) ||
		!t.Run("prefill and decode get the NICs of their GPUs", n.prefillDecode) {
		return
	}
	t.Run("a pod gated on rail.dev/RDMAReady follows its port", n.rdmaReady)
	if !t.Run("a DRANet pod gets memlock and env, and keeps its NIC", n.draNet) ||
		!t.Run("pods without GPUs pass through while every NIC is held", n.passThrough) {
		return
	}
	with := n.measureStartup(t, "chained", 20)
	t.Logf("kubectl apply -> Running, 20 pods: primary alone median %v p90 %v; with rail chained median %v p90 %v",
		without.median, without.p90, with.median, with.p90)
	_ = t.Run("raild rollout keeps leases and interfaces", n.rollout) &&
		t.Run("GPU pod created while raild is down starts once it is back", n.raildDown) &&
		t.Run("primary rewrites its conflist", n.primaryRewrite) &&
		t.Run("helm uninstall leaves nothing", n.uninstall)
}

func (n *node) install(t *testing.T) {
	c := n.c
	image := c.importImage(t)
	c.helmInstall(t, c.rigValues(t, n.m, n.work), image)
	if !c.railChained(t) {
		t.Fatalf("rail is not chained after install:\n%s", readFile(c.conflist(t)))
	}
	if _, err := os.Stat(filepath.Join(c.run, "cni/bin/rail")); err != nil {
		t.Errorf("install-cni did not put rail into the CNI bin dir: %v", err)
	}
}

func (n *node) prefillDecode(t *testing.T) {
	c := n.c
	c.kubectlApply(t, joinDocs(gated(gpuDeployment("prefill", 2)), gpuDeployment("decode", 2)))
	leases := []string{}
	for _, app := range []string{"prefill", "decode"} {
		p := c.runningPod(t, app)
		n.gpuPods[app] = p
		n.railAddr[app] = n.checkGPUPod(t, p)
		leases = append(leases, n.railAddr[app])
	}
	t.Run("both serve :8000 on their own IPs", func(t *testing.T) {
		for _, app := range []string{"prefill", "decode"} {
			p := n.gpuPods[app]
			if body, err := httpGet(p.IP); err != nil || body != p.Name {
				t.Errorf("%s on %s:8000: %q, %v", app, p.IP, body, err)
			}
		}
	})
	t.Run("they reach each other over the rail addresses", func(t *testing.T) {
		for _, pair := range [][2]string{{"prefill", "decode"}, {"decode", "prefill"}} {
			from, to := n.gpuPods[pair[0]], n.gpuPods[pair[1]]
			// nc, not wget: the static busybox's wget crashes without the libc's NSS modules
			out := c.exec(t, from.Name, `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 `+n.railAddr[pair[1]]+` 8000 | tail -n 1`)
			if out != to.Name {
				t.Errorf("%s -> %s over rail (%s): %q", pair[0], pair[1], n.railAddr[pair[1]], out)
			}
		}
	})
	if leases[0] == leases[1] {
		t.Errorf("prefill and decode share the rail address %s", leases[0])
	}
}

// checkGPUPod checks one GPU pod against what the kubelet gave it and
// returns its (first) rail address.
func (n *node) checkGPUPod(t *testing.T, p pod) string {
	t.Helper()
	c := n.c
	gpus := podGPUs(t, c.podResources(), e2eNamespace, p.Name)
	if len(gpus) != 2 {
		t.Fatalf("%s: PodResources reports GPUs %v, want 2", p.Name, gpus)
	}
	want := n.m.nicsFor(t, gpus)
	leases := podLeases(c.leases(t), p.Name)
	var got []string
	for _, l := range leases {
		got = append(got, l.NICs...)
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s holds GPUs %v: leased NICs %v, want the closest %v", p.Name, gpus, got, want)
	}
	links := c.railLinks(t, p.Name)
	if len(links) != len(leases) {
		t.Errorf("%s: rail interfaces %v for %d leases", p.Name, links, len(leases))
	}
	for _, l := range leases {
		if links[l.IfName] != l.Address {
			t.Errorf("%s: %s has %q, lease says %s", p.Name, l.IfName, links[l.IfName], l.Address)
		}
	}
	n.checkInjected(t, p, want)
	n.checkTold(t, p, leases)
	return strings.Split(leases[0].Address, "/")[0]
}

// checkInjected: the NICs' uverbs nodes and rdma_cm open for reading and
// writing, memlock raised, NCCL_IB_HCA naming exactly the pod's NICs.
func (n *node) checkInjected(t *testing.T, p pod, nics []string) {
	t.Helper()
	c := n.c
	devs := []string{"rdma_cm"}
	for _, nic := range nics {
		devs = append(devs, n.m.uverbs(t, nic))
	}
	listing := c.exec(t, p.Name, "ls /dev/infiniband")
	if got := strings.Fields(listing); !sameSet(got, devs) {
		t.Errorf("%s: /dev/infiniband has %v, want %v", p.Name, got, devs)
	}
	numbers := harness.HarmlessDevNumbers()
	for _, d := range devs {
		got := c.exec(t, p.Name, "stat -c '%F %t:%T' /dev/infiniband/"+d+" && : < /dev/infiniband/"+d+" && : > /dev/infiniband/"+d)
		if want := fmt.Sprintf("character special file %x:%x", numbers[d][0], numbers[d][1]); got != want {
			t.Errorf("%s: /dev/infiniband/%s is %q, want %q", p.Name, d, got, want)
		}
	}
	limits := c.exec(t, p.Name, "grep 'Max locked memory' /proc/self/limits")
	if f := strings.Fields(limits); len(f) < 5 || f[3] != "4194304" || f[4] != "4194304" {
		t.Errorf("%s: memlock %q, want 4194304 (nri.memlock %s)", p.Name, limits, memlock)
	}
	env := c.exec(t, p.Name, "echo $NCCL_IB_HCA")
	if hcas, ok := strings.CutPrefix(env, "="); !ok || !sameSet(strings.Split(hcas, ","), nics) {
		t.Errorf("%s: NCCL_IB_HCA=%q, want exactly %v (=-prefixed)", p.Name, env, nics)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}
