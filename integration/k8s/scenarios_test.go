package k8s

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/api"
)

// passThrough: with all 8 GPUs taken (so every NIC is held in move mode),
// a pod without GPUs and a DaemonSet on the pod network start, without a
// rail interface and without a lease.
func (n *node) passThrough(t *testing.T) {
	c := n.c
	c.kubectlApply(t, gpuDeployment("filler", 4))
	filler := c.runningPod(t, "filler")
	n.gpuPods["filler"] = filler
	held := map[string]bool{}
	for _, l := range c.leases(t) {
		for _, nic := range l.NICs {
			held[nic] = true
		}
	}
	if len(held) != 4 {
		t.Fatalf("want every NIC held by the GPU pods, held: %v", held)
	}
	if away := n.m.standInsAway(); len(away) != 4 {
		t.Fatalf("want all 4 stand-in NICs inside pods, away from the host: %v", away)
	}
	c.kubectlApply(t, joinDocs(plainPod("plain"), agentDaemonSet()))
	for _, app := range []string{"plain", "agent"} {
		p := c.runningPod(t, app)
		if links := c.railLinks(t, p.Name); len(links) != 0 {
			t.Errorf("%s got rail interfaces %v", p.Name, links)
		}
		if l := podLeases(c.leases(t), p.Name); len(l) != 0 {
			t.Errorf("%s got leases %+v", p.Name, l)
		}
		if body, err := httpGet(p.IP); app == "plain" && (err != nil || body != p.Name) {
			t.Errorf("%s on %s:8000: %q, %v", p.Name, p.IP, body, err)
		}
	}
}

// rollout restarts raild through its DaemonSet while the GPU pods run.
func (n *node) rollout(t *testing.T) {
	c := n.c
	before := leaseKeys(c.leases(t))
	linksBefore := map[string]map[string]string{}
	for app, p := range n.gpuPods {
		linksBefore[app] = c.railLinks(t, p.Name)
	}
	// preStop's install-cni --unless-rollout keeps rail's entry through a
	// rollout: a pod created while no raild runs still gets rail (and
	// follows onRaildDown) instead of silently starting without it.
	path := c.conflist(t)
	stop := watchEntry(path)
	c.kubectl(t, "rollout", "restart", "-n", railNamespace, "ds/raild")
	c.kubectl(t, "rollout", "status", "-n", railNamespace, "ds/raild", "--timeout=2m")
	if missing, first := stop(); missing > 0 {
		t.Errorf("rail's entry left %s in %d read(s) during the rollout; first:\n%s", path, missing, first)
	}
	if after := leaseKeys(c.leases(t)); !slices.Equal(before, after) {
		t.Errorf("leases changed across the rollout:\nbefore %v\nafter  %v", before, after)
	}
	for app, p := range n.gpuPods {
		if got := c.railLinks(t, p.Name); !maps.Equal(got, linksBefore[app]) {
			t.Errorf("%s: rail interfaces %v after the rollout, %v before", app, got, linksBefore[app])
		}
	}
	waitFor(t, "rail's entry in the conflist after the rollout", 30*time.Second, func() bool { return c.railChained(t) })
}

// raildDown: raild's container stops and cannot start again (the test
// holds its lease store's lock); a GPU pod created meanwhile does not start
// without its NIC, and runs with it once raild is back.
func (n *node) raildDown(t *testing.T) {
	c := n.c
	c.kubectl(t, "delete", "deployment", "-n", e2eNamespace, "filler", "--wait=true")
	waitFor(t, "the filler's NICs back in the host", time.Minute, func() bool { return len(n.m.standInsAway()) <= 2 })
	delete(n.gpuPods, "filler")
	unlock := n.holdRaildDown(t)
	c.kubectlApply(t, gpuDeployment("late", 2))
	waitFor(t, "the late pod's sandbox to fail while raild is down", time.Minute, func() bool {
		out, _ := c.kubectlErr("get", "events", "-n", e2eNamespace, "--field-selector", "reason=FailedCreatePodSandBox", "-o", "name")
		return out != ""
	})
	if out, _ := c.kubectlErr("get", "pods", "-n", e2eNamespace, "-l", "app=late", "-o", "jsonpath={.items[*].status.phase}"); out == "Running" {
		t.Fatalf("the late pod runs while raild is down")
	}
	unlock()
	p := c.runningPod(t, "late")
	n.gpuPods["late"] = p
	n.checkGPUPod(t, p)
}

// holdRaildDown stops raild's container and takes the lease store's lock
// before the kubelet restarts it, so every restart fails until unlock.
func (n *node) holdRaildDown(t *testing.T) (unlock func()) {
	t.Helper()
	c := n.c
	db := filepath.Join(c.run, "rail-state/leases.db")
	f, err := os.OpenFile(db, os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	crictl := func(args ...string) string {
		out, _ := c.toolAt(filepath.Join(c.criDir, "bin/crictl"), nil, append([]string{"--config", filepath.Join(c.run, "crictl.yaml")}, args...)...)
		return out
	}
	waitFor(t, "the lease store's lock", 2*time.Minute, func() bool {
		if id := crictl("ps", "-q", "--name", "^raild$", "--state", "running"); id != "" {
			crictl("stop", "-t", "1", id)
		}
		return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
	})
	if _, err := api.NewClient("/run/rail/raild.sock", time.Second).Leases(t.Context()); err == nil {
		t.Fatal("raild still answers while its store is locked")
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}
}

// primaryRewrite: the primary writes its own conflist again; rail's entry
// comes back and new GPU pods still get their NICs.
func (n *node) primaryRewrite(t *testing.T) {
	c := n.c
	written := c.rewriteConflist(t, n.primary)
	waitFor(t, "rail's entry back in the rewritten conflist", 30*time.Second, func() bool { return c.railChained(t) })
	t.Logf("rail's entry was back %v after the primary rewrote its conflist", time.Since(written).Round(time.Millisecond))
	c.kubectlApply(t, gpuDeployment("after-rewrite", 2))
	p := c.runningPod(t, "after-rewrite")
	n.gpuPods["after-rewrite"] = p
	n.checkGPUPod(t, p)
}

// uninstall: pods deleted, then helm uninstall: the conflist is the
// primary's again, the NICs are back under their names, nothing is left.
func (n *node) uninstall(t *testing.T) {
	c := n.c
	c.kubectl(t, "delete", "namespace", e2eNamespace, "--wait=true", "--timeout=3m")
	if l := c.leases(t); len(l) != 0 {
		t.Errorf("leases after every pod went: %+v", l)
	}
	waitFor(t, "every NIC back in the host under its name", time.Minute, func() bool { return len(n.m.standInsAway()) == 0 })
	c.helm(t, "uninstall", "rail", "-n", railNamespace, "--wait", "--timeout", "2m")
	waitFor(t, "raild's pod to go", 2*time.Minute, func() bool {
		out, err := c.kubectlErr("get", "pods", "-n", railNamespace, "-o", "name")
		return err == nil && out == ""
	})
	if got := readFile(c.conflist(t)); got != string(n.primary) {
		t.Errorf("conflist after uninstall is not the primary's:\n%s\nwant:\n%s", got, n.primary)
	}
	if left := podNetnsLeft(t, c); len(left) != 0 {
		t.Errorf("pod netns left: %v", left)
	}
}

// podNetnsLeft lists the netns bind mounts of pods still under containerd's state.
func podNetnsLeft(t *testing.T, c *cluster) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(c.run, "containerd/state/io.containerd.grpc.v1.cri/netns"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// leaseKeys identifies leases by pod, interface, address and NICs.
func leaseKeys(leases []api.Lease) []string {
	var keys []string
	for _, l := range leases {
		keys = append(keys, strings.Join([]string{l.PodName, l.IfName, l.Address, strings.Join(l.NICs, ","), l.Sandbox}, " "))
	}
	sort.Strings(keys)
	return keys
}

// watchEntry polls the conflist every 20 ms until stop is called, which
// returns how many reads found rail's entry missing and the first such
// content.
func watchEntry(path string) (stop func() (missing int, first string)) {
	done := make(chan struct{})
	type seen struct {
		missing int
		first   string
	}
	result := make(chan seen, 1)
	go func() {
		var s seen
		for {
			select {
			case <-done:
				result <- s
				return
			case <-time.After(20 * time.Millisecond):
			}
			data, err := os.ReadFile(path)
			if err != nil {
				continue // between a writer's rename and our open
			}
			if types, err := pluginTypes(data); err == nil && (len(types) < 2 || types[len(types)-1] != "rail") {
				if s.missing++; s.first == "" {
					s.first = string(data)
				}
			}
		}
	}()
	return func() (int, string) {
		close(done)
		s := <-result
		return s.missing, s.first
	}
}
