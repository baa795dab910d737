package inventory

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// churnEnv tells the copy of the test binary that TestChurnNeighbour runs
// in what to churn: "kind hostNetns podNetns nic pods prefix".
const churnEnv = "RAIL_INV_CHURN"

// churnPods is how many pods of another plugin one benchmark round makes
// and deletes beside the inventory.
const churnPods = 100

// churnTail is how long a round waits after its churn for the watch to
// finish with it: the reader's gather, the settle and raild's 2 s
// follow-up.
const churnTail = 2500 * time.Millisecond

// BenchmarkChurnBeside is raild's CPU per pod it does not serve: pods of
// another plugin made and deleted beside an inventory that watches the
// netns as raild watches the host's (raild's Settle and FollowUp, a
// netlink socket of its own, its kernel filter as on a node whose sysfs
// is the kernel's), the churn done by another process so that only the
// watch's CPU is this process's. "veth": a ptp/bridge-like pod
// (a veth pair whose peer is made in the pod netns, the host end set up,
// the peer set up, the pair deleted); "macvlan": upstream macvlan's (a
// macvlan made on a NIC's netdev in the node's netns, moved into the pod
// netns, set up and deleted there); "move": host-device's (the NIC's own
// netdev moved into the pod netns, set up there, moved back and set up
// again, as make bench puts it back); "veth-fake": the veth pods beside an
// inventory on a fake machine (raild --root, as make bench runs it: the
// kernel filter cannot ask the kernel for parent devices there).
// Reported per pod: this process's CPU (getrusage, all threads) less that
// of an idle window as long, and the link events the inventory
// classified.
func BenchmarkChurnBeside(b *testing.B) {
	for _, name := range []string{"veth", "macvlan", "move", "veth-fake"} {
		kind, fake := strings.CutSuffix(name, "-fake")
		b.Run(name, func(b *testing.B) {
			ns, h := testNetns(b)
			podName := fmt.Sprintf("ry-inv-%d-cpod", os.Getpid())
			namedNetns(b, podName)
			base := fmt.Sprintf("rycb%d", os.Getpid()%100000)
			nic := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: base + "n"}, PeerName: base + "p"}
			root, _ := fakeNode(b, fakesys.Options{Netdevs: map[string]string{"mlx5_0": nic.Name}})
			inv, err := New(root, nil, nil)
			must(b, err)
			if !fake {
				inv.linksDescribed = kernelNamesParents() // as on a node (TestKernelFilterQuietsChurn)
			}
			runWatch(b, inv, ns, Watch{Settle: 100 * time.Millisecond, FollowUp: 2 * time.Second})
			must(b, h.LinkAdd(nic))
			must(b, h.LinkSetUp(nic))
			time.Sleep(churnTail) // the stand-in's own reads and follow-up

			idleStart := cpuNow(b)
			wall := time.Now()
			time.Sleep(churnTail + 500*time.Millisecond)
			idlePerSec := float64(cpuNow(b)-idleStart) / time.Since(wall).Seconds()

			var cpu, idle time.Duration
			before := inv.Stats()
			b.ResetTimer()
			for range b.N {
				start, t0 := cpuNow(b), time.Now()
				child := exec.Command(os.Args[0], "-test.run=^TestChurnNeighbour$", "-test.count=1")
				child.Env = append(os.Environ(), churnEnv+"="+strings.Join([]string{
					kind, fmt.Sprintf("ry-inv-%d", os.Getpid()), podName, nic.Name, strconv.Itoa(churnPods), base,
				}, " "))
				if out, err := child.CombinedOutput(); err != nil {
					b.Fatalf("churn: %v\n%s", err, out)
				}
				time.Sleep(churnTail)
				cpu += cpuNow(b) - start
				idle += time.Duration(idlePerSec * time.Since(t0).Seconds())
			}
			b.StopTimer()
			pods := float64(b.N * churnPods)
			b.ReportMetric(float64((cpu-idle).Microseconds())/pods, "µs-cpu/pod")
			after := inv.Stats()
			b.ReportMetric(float64(after.Events-before.Events)/pods, "events/pod")
			b.ReportMetric(float64(after.DeviceReads-before.DeviceReads)/pods, "device-reads/pod")
			b.ReportMetric(float64(after.Published-before.Published)/pods, "snapshots/pod")
		})
	}
}

// cpuNow is this process's CPU time (user and system, all threads).
func cpuNow(t testing.TB) time.Duration {
	t.Helper()
	var ru unix.Rusage
	must(t, unix.Getrusage(unix.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestChurnNeighbour is the churn of BenchmarkChurnBeside, in a process
// of its own: it runs only when the benchmark starts it.
func TestChurnNeighbour(t *testing.T) {
	spec := strings.Fields(os.Getenv(churnEnv))
	if len(spec) != 6 {
		t.Skip("runs only as BenchmarkChurnBeside's neighbour")
	}
	kind, hostName, podName, nicName, prefix := spec[0], spec[1], spec[2], spec[3], spec[5]
	pods, err := strconv.Atoi(spec[4])
	must(t, err)
	hostNS, err := netns.GetFromPath(netnstest.Dir + "/" + hostName)
	must(t, err)
	defer hostNS.Close()
	podNS, err := netns.GetFromPath(netnstest.Dir + "/" + podName)
	must(t, err)
	defer podNS.Close()
	host, err := netlink.NewHandleAt(hostNS)
	must(t, err)
	defer host.Close()
	pod, err := netlink.NewHandleAt(podNS)
	must(t, err)
	defer pod.Close()
	for i := range pods {
		switch kind {
		case "veth":
			vethPod(t, host, pod, podNS, fmt.Sprintf("%s-%dh", prefix, i), fmt.Sprintf("%s-%dp", prefix, i))
		case "macvlan":
			parent, err := host.LinkByName(nicName)
			must(t, err)
			macvlanPod(t, host, pod, podNS, parent.Attrs().Index, fmt.Sprintf("%s-m%d", prefix, i))
		case "move":
			hostDevicePod(t, host, pod, hostNS, podNS, nicName)
		default:
			t.Fatalf("unknown churn %q", kind)
		}
	}
}

// vethPod is what ptp-like plugins do for a pod: a veth pair whose peer
// is in the pod netns, both up, then deleted.
func vethPod(t testing.TB, host, pod *netlink.Handle, podNS netns.NsHandle, name, peer string) {
	t.Helper()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer, PeerNamespace: netlink.NsFd(int(podNS))}
	must(t, host.LinkAdd(veth))
	must(t, host.LinkSetUp(veth))
	p, err := pod.LinkByName(peer)
	must(t, err)
	must(t, pod.LinkSetUp(p))
	must(t, host.LinkDel(veth))
}

// macvlanPod is what upstream macvlan does for a pod: a child of the
// parent made down in the host netns, moved into the pod, set up there,
// then deleted.
func macvlanPod(t testing.TB, host, pod *netlink.Handle, podNS netns.NsHandle, parent int, name string) {
	t.Helper()
	attrs := netlink.NewLinkAttrs()
	attrs.Name, attrs.ParentIndex = name, parent
	mv := &netlink.Macvlan{LinkAttrs: attrs, Mode: netlink.MACVLAN_MODE_BRIDGE}
	must(t, host.LinkAdd(mv))
	must(t, host.LinkSetNsFd(mv, int(podNS)))
	moved, err := pod.LinkByName(name)
	must(t, err)
	must(t, pod.LinkSetUp(moved))
	must(t, pod.LinkDel(moved))
}

// hostDevicePod is what upstream host-device does for a pod with a NIC's
// netdev: moved into the pod netns and set up there, then moved back
// (down) and set up again in the host netns (as make bench tidies it).
func hostDevicePod(t testing.TB, host, pod *netlink.Handle, hostNS, podNS netns.NsHandle, name string) {
	t.Helper()
	link, err := host.LinkByName(name)
	must(t, err)
	must(t, host.LinkSetNsFd(link, int(podNS)))
	inPod, err := pod.LinkByName(name)
	must(t, err)
	must(t, pod.LinkSetUp(inPod))
	must(t, pod.LinkSetNsFd(inPod, int(hostNS)))
	back, err := host.LinkByName(name)
	must(t, err)
	must(t, host.LinkSetUp(back))
}
