package k8s

import (
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// mnode is one run of the Multus scenario.
type mnode struct {
	c       *cluster
	m       *machine
	primary []byte // 00-multus.conf as the node has it
}

// TestMultus: the thin Multus plugin is the node's primary (default network:
// the rig's ptp conflist), raild runs in nad mode from the Helm chart, and
// pods get rail interfaces only through the NADs of manifests/examples.
func TestMultus(t *testing.T) {
	c := requireCluster(t)
	multusBin := requireMultus(t)
	work, err := os.MkdirTemp("/tmp", "rail-k8s-multus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	n := &mnode{c: c, m: newMachineOf(t, work, fakeMachine+"-roce", roceMachine(t))}
	c.installPlugins(t, multusBin)
	t.Logf("rig: node up in %v", c.start(t, c.multusPrimary(t, work)).Round(10*time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("multus log (tail):\n%s", tail(readFile(filepath.Join(c.run, "log/multus.log")), 40))
		}
	})
	if n.primary, err = os.ReadFile(n.conf()); err != nil {
		t.Fatal(err)
	}
	c.kubectl(t, "apply", "-f", filepath.Join(c.repo, "integration/kapi/crds/network-attachment-definitions.yaml"))
	c.kubectl(t, "wait", "--for", "condition=established", "--timeout=60s", "crd/network-attachment-definitions.k8s.cni.cncf.io")
	c.kubectlApply(t, namespace(e2eNamespace))
	if !t.Run("install in nad mode", n.install) {
		return
	}
	for _, name := range []string{"nad-rail-macvlan.yaml", "nad-rail-move.yaml", "nad-rail-vf.yaml"} {
		c.applyExample(t, name)
	}
	// the one host-specific value of the examples: macvlan's master
	c.applyExample(t, "nad-macvlan-rail-ipam.yaml", `"master": "ens1f0np0"`, `"master": "`+n.m.netdevs["mlx5_1"]+`"`)
	c.startVFPlugin(t, n.m, vfNICs...)
	for _, a := range simpleAttachments {
		t.Run(a.name, func(t *testing.T) { n.attachOne(t, a) })
	}
	t.Run("move mode: the NIC closest to the pod's GPUs", n.moveMode)
	t.Run("resourceName: the allocated device is the NIC", n.resourceName)
	t.Run("resourceName: a user's unknown key is still refused", n.unknownKeyRefused)
}

// simpleAttachment is a pod attached through one NAD, and the pool and
// mode of its lease.
type simpleAttachment struct {
	name, pod, networks, annotations, pool, nad string
	mode                                        api.Mode
}

var simpleAttachments = []simpleAttachment{
	// eth0 from the default network (ptp), net1 from the pool cni-args name
	{name: "cni-args pool: eth0 from the default network, net1 from decode", pod: "nad-decode",
		networks: `[{"name":"rail-roce","cni-args":{"pool":"decode"}}]`, pool: "decode", nad: "rail-roce", mode: api.ModeMacvlan},
	// macvlan (upstream) makes net1, rail-ipam leases its address
	{name: "rail-ipam under macvlan", pod: "nad-ipam",
		networks: `[{"name":"macvlan-rail-ipam","cni-args":{"pool":"decode"}}]`, pool: "decode", nad: "macvlan-rail-ipam", mode: api.ModeIPAM},
	// Multus forwards no annotations: raild reads rail.dev/pool from the API
	// server (its pod informer).
	{name: "rail.dev/pool annotation read from the API server", pod: "nad-prefill", networks: "rail-roce",
		annotations: api.AnnotationPool + ": prefill", pool: "prefill", nad: "rail-roce", mode: api.ModeMacvlan},
}

// conf is the node's CNI config file.
func (n *mnode) conf() string { return filepath.Join(n.c.confDir(), "00-multus.conf") }

func (n *mnode) install(t *testing.T) {
	c := n.c
	values := filepath.Join(t.TempDir(), "values-multus.yaml")
	if err := os.WriteFile(values, []byte(multusValues), 0o644); err != nil {
		t.Fatal(err)
	}
	c.helmInstallFiles(t, c.importImage(t), c.rigValues(t, n.m, t.TempDir()), values)
	for _, b := range []string{"rail", "rail-ipam"} {
		if _, err := os.Stat(filepath.Join(c.run, "cni/bin", b)); err != nil {
			t.Errorf("install-cni did not put %s into the CNI bin dir: %v", b, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(c.confDir(), "*"))
	if got := readFile(n.conf()); got != string(n.primary) || len(files) != 1 {
		t.Errorf("nad mode changed the conf dir: %v\n%s", files, got)
	}
}

// attachOne: the pod gets eth0 and net1 from the lease; Multus'
// network-status lists both; deleting the pod frees the lease.
func (n *mnode) attachOne(t *testing.T, a simpleAttachment) {
	c := n.c
	c.kubectlApply(t, multusPod(a.pod, a.networks, a.annotations, ""))
	p := c.runningPod(t, a.pod)
	l := n.onlyLease(t, a.pod, a.pool, a.mode)
	n.checkAttached(t, p, l, a.nad)
	n.checkGone(t, a.pod)
}

// moveMode: a 2-GPU pod naming rail-move gets, as net1, the NIC closest to
// the GPUs the kubelet gave it; it is back in the host after deletion.
func (n *mnode) moveMode(t *testing.T) {
	c := n.c
	const pod = "nad-move"
	c.kubectlApply(t, multusPod(pod, "rail-move", "", "nvidia.com/gpu: 2"))
	p := c.runningPod(t, pod)
	gpus := podGPUs(t, c.podResources(), e2eNamespace, pod)
	l := n.onlyLease(t, pod, "rail", api.ModeMove)
	if want := n.m.nicsFor(t, gpus); !slices.Equal(l.NICs, want) {
		t.Errorf("GPUs %v: leased NICs %v, want the closest %v", gpus, l.NICs, want)
	}
	if away := n.m.standInsAway(); len(away) != 1 {
		t.Errorf("NICs away from the host: %v, want the pod's one", away)
	}
	n.checkAttached(t, p, l, "rail-move")
	n.checkGone(t, pod)
	waitFor(t, "the NIC back in the host under its name", time.Minute, func() bool { return len(n.m.standInsAway()) == 0 })
}

// vfNICs are the NICs whose PCI addresses the fake VF plugin serves: not
// mlx5_0, which placement alone would pick for a pod without GPUs.
var vfNICs = []string{"mlx5_2", "mlx5_3"}

// resourceName: the kubelet allocates a device of rail-vf's resource,
// Multus injects its ID as deviceID and pciBusID, and rail attaches exactly
// that NIC.
func (n *mnode) resourceName(t *testing.T) {
	c := n.c
	const pod = "nad-vf"
	c.kubectlApply(t, multusPod(pod, "rail-vf", "", vfResource+": 1"))
	p := c.runningPod(t, pod)
	devs := podDevices(t, c.podResources(), e2eNamespace, pod, vfResource)
	l := n.onlyLease(t, pod, "rail", api.ModeMove)
	if want := n.m.nicsByPCI(t, devs); !slices.Equal(l.NICs, want) || slices.Contains(want, "mlx5_0") {
		t.Errorf("allocated %v: leased NICs %v, want %v (one of %v)", devs, l.NICs, want, vfNICs)
	}
	n.checkAttached(t, p, l, "rail-vf")
	n.checkGone(t, pod)
	waitFor(t, "the NIC back in the host under its name", time.Minute, func() bool { return len(n.m.standInsAway()) == 0 })
}

// unknownKeyRefused: the same NAD with a misspelt key of the user's: the
// sandbox fails, and the event names the key.
func (n *mnode) unknownKeyRefused(t *testing.T) {
	c := n.c
	c.applyExample(t, "nad-rail-vf.yaml", "name: rail-vf", "name: rail-vf-typo", `"mode": "move"`, `"mdoe": "move"`)
	const pod = "nad-typo"
	c.kubectlApply(t, multusPod(pod, "rail-vf-typo", "", vfResource+": 1"))
	var msg string
	waitFor(t, "the sandbox of "+pod+" to fail", 2*time.Minute, func() bool {
		msg, _ = c.kubectlErr("get", "events", "-n", e2eNamespace, "--field-selector",
			"reason=FailedCreatePodSandBox,involvedObject.name="+pod, "-o", "jsonpath={.items[*].message}")
		return msg != ""
	})
	// Multus re-marshals the config with sorted keys: before rail took
	// Multus' keys, deviceID was the unknown field named here.
	if !strings.Contains(msg, "unsupported netconf field") || !strings.Contains(msg, "mdoe") {
		t.Errorf("sandbox failure %q: want rail's unknown-field error naming mdoe", msg)
	}
	n.checkGone(t, pod)
}

// onlyLease returns the pod's one lease, checked for net1, pool and mode.
func (n *mnode) onlyLease(t *testing.T, pod, pool string, mode api.Mode) api.Lease {
	t.Helper()
	leases := podLeases(n.c.leases(t), pod)
	if len(leases) != 1 {
		t.Fatalf("%s: leases %+v, want one", pod, leases)
	}
	l := leases[0]
	if l.IfName != "net1" || l.Pool != pool || l.Mode != mode {
		t.Errorf("%s: lease %+v, want net1 from pool %s in mode %s", pod, l, pool, mode)
	}
	return l
}

// checkAttached: the pod has eth0 with its pod IP and net1 with the lease's
// address, and Multus' network-status lists both.
func (n *mnode) checkAttached(t *testing.T, p pod, l api.Lease, nad string) {
	t.Helper()
	addrs := n.c.podAddrs(t, p.Name)
	if addrs["net1"] != l.Address || !strings.HasPrefix(addrs["eth0"], p.IP+"/") {
		t.Errorf("%s: addresses %v; want eth0 %s, net1 %s", p.Name, addrs, p.IP, l.Address)
	}
	prefix, err := netip.ParsePrefix(l.Address)
	if err != nil {
		t.Fatalf("lease address %q: %v", l.Address, err)
	}
	status := n.c.podNetworkStatus(t, p.Name)
	var net1, eth0 bool
	for _, s := range status {
		switch {
		case s.Interface == "net1" && s.Name == e2eNamespace+"/"+nad && slices.Equal(s.IPs, []string{prefix.Addr().String()}):
			net1 = true
		case s.Interface == "eth0" && s.Default && slices.Contains(s.IPs, p.IP):
			eth0 = true
		}
	}
	if !net1 || !eth0 || len(status) != 2 {
		t.Errorf("%s: network-status %+v; want exactly eth0 (default, %s) and net1 (%s/%s, %s)",
			p.Name, status, p.IP, e2eNamespace, nad, prefix.Addr())
	}
}

// checkGone deletes the pod (the scenario's only one): its lease, its
// netns and Multus' cache of its delegates go with it.
func (n *mnode) checkGone(t *testing.T, pod string) {
	t.Helper()
	c := n.c
	c.deletePod(t, pod)
	if l := podLeases(c.leases(t), pod); len(l) != 0 {
		t.Errorf("%s: leases left after deletion: %+v", pod, l)
	}
	cache := filepath.Join(c.run, "multus/cache")
	waitFor(t, pod+"'s netns and Multus' cached delegates and results to go", time.Minute, func() bool {
		return len(podNetnsLeft(t, c)) == 0 && len(filesBelow(t, cache)) == 0
	})
}

// filesBelow lists the files (not directories) below dir, none when dir is absent.
func filesBelow(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return files
}
