package serve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/daemon/attached"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/readiness"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// discovered writes a built-in machine, lets setup change it, and
// discovers it.
func discovered(t *testing.T, machine string, setup func(root string) error) (string, *topology.Machine) {
	t.Helper()
	_, root := machineDir(t, machine)
	if setup != nil {
		if err := setup(root); err != nil {
			t.Fatal(err)
		}
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, m
}

func draNIC(m *topology.Machine, name, ifname, claim string, addrs ...string) podinfo.DRANIC {
	n, _ := m.NICByName(name)
	nic := podinfo.DRANIC{Device: podinfo.DRADevice{Driver: podinfo.DefaultDRANICDriver, Pool: "node-a", Device: "pci-" + name, Claim: claim},
		NIC: n.Name, RDMADevice: n.RDMADevice(), Port: n.PortNum(), IfName: ifname, PCI: n.PCI, LinkLayer: n.LinkLayer}
	for _, a := range addrs {
		nic.Addrs = append(nic.Addrs, netip.MustParseAddr(a))
	}
	return nic
}

// TestReadinessDRAPods: the pods holding NICs of DRA NIC drivers are
// checked beside the leased ones: each port a rail found by its slice's
// netdev in the pod's netns, its addresses compared without a prefix
// length (the link-local one left out), the GID for the address the env
// was worked out from at the index the containers holding that NIC got,
// exclusive as the node's RDMA netns mode; a pod with leases and DRA NICs
// gets both kinds of rails; the containers carry the driver's nodes.
func TestReadinessDRAPods(t *testing.T) {
	_, m := discovered(t, "h100x8-cx7x4", nil)
	leases := []ipam.Lease{{Sandbox: "both", IfName: "rail0", Mode: "macvlan", Address: netip.MustParsePrefix("10.0.0.1/24"), NICs: []string{"mlx5_0"},
		PodNamespace: "ml", PodName: "pod-both", PodUID: "uid-both", Netns: "/var/run/netns/both"}}
	held := podinfo.NewDRAHeld()
	held.Set("both", podinfo.PodDRANICs{Namespace: "ml", Name: "pod-both", UID: "uid-both", Netns: "/var/run/netns/both",
		NICs: []podinfo.DRANIC{draNIC(m, "mlx5_1", "eth1", "ml/c1", "10.56.0.5")}})
	held.Set("dra", podinfo.PodDRANICs{Namespace: "ml", Name: "pod-dra", UID: "uid-dra", Netns: "/var/run/netns/cni-dra", GPUs: []int{2, 3},
		NICs: []podinfo.DRANIC{draNIC(m, "mlx5_2", "eth2", "ml/c2", "fe80::1", "fd00::5", "10.56.0.6"), draNIC(m, "mlx5_3", "", "ml/c3")}})
	uverbs := func(nic string) nri.DriverDeviceRecord {
		n, _ := m.NICByName(nic)
		return nri.DriverDeviceRecord{DeviceRecord: nri.DeviceRecord{Path: n.Uverbs.Path, Major: int64(n.Uverbs.Major), Minor: int64(n.Uverbs.Minor)},
			NIC: nic, Driver: podinfo.DefaultDRANICDriver, Claim: "ml/c2"}
	}
	containers := func(sandbox string) []nri.ContainerRecord {
		if sandbox != "dra" {
			return nil
		}
		return []nri.ContainerRecord{
			{Name: "other", Pid: 8, Memlock: 1 << 30, GIDIndex: 7, DriverDevices: []nri.DriverDeviceRecord{uverbs("mlx5_3")}},
			{Name: "app", Pid: 7, Memlock: 1 << 30, GIDIndex: 5, DriverDevices: []nri.DriverDeviceRecord{uverbs("mlx5_2")}},
		}
	}
	for _, mode := range []rdma.NetnsMode{rdma.NetnsShared, rdma.NetnsExclusive} {
		t.Run(string(mode), func(t *testing.T) {
			r := &railReadiness{placed: attached.NewPlacements(nil), leases: func() []ipam.Lease { return leases }, held: held, rdmaNetns: mode}
			r.containers = containers
			pods := r.pods(m)
			if len(pods) != 2 || pods[0].Sandbox != "both" || pods[1].Sandbox != "dra" {
				t.Fatalf("pods %+v: want both, then dra", pods)
			}
			both := pods[0]
			if len(both.Rails) != 2 || both.Rails[0].DRA != nil || both.Rails[0].Match != readiness.MatchPrefix ||
				both.Rails[1].DRA == nil || both.Rails[1].IfName != "eth1" || both.Rails[1].Device != "mlx5_1" {
				t.Fatalf("a pod with a lease and a DRA NIC: %+v", both.Rails)
			}
			dra := pods[1]
			if dra.Name != "pod-dra" || dra.UID != "uid-dra" || dra.GPUSource != gpuSourceKubelet ||
				len(dra.GPUs) != 2 || dra.GPUs[0].Index != 2 || dra.GPUs[0].PCI != m.GPUs[2].PCI {
				t.Fatalf("DRA pod %+v", dra)
			}
			n2, _ := m.NICByName("mlx5_2")
			want := readiness.Rail{Netns: "/var/run/netns/cni-dra", IfName: "eth2", PCI: n2.PCI,
				Addresses: []netip.Prefix{netip.MustParsePrefix("fd00::5/128"), netip.MustParsePrefix("10.56.0.6/32")},
				Match:     readiness.MatchAddressOnly, GIDAddress: netip.MustParseAddr("10.56.0.6"),
				DRA:    &readiness.DRAClaim{Driver: "dra.net", Claim: "ml/c2", Device: "dra.net/node-a/pci-mlx5_2"},
				Device: "mlx5_2", Port: 1, LinkLayer: n2.LinkLayer, Exclusive: mode == rdma.NetnsExclusive, GIDIndex: 5,
				Placed: readiness.Placement{NIC: &api.NIC{RDMADevice: "mlx5_2", Port: 1, LinkLayer: n2.LinkLayer, Netdev: "eth2", PCI: n2.PCI}}}
			if len(dra.Rails) != 2 || !reflect.DeepEqual(dra.Rails[0], want) {
				t.Fatalf("DRA rail\n got %+v\nwant %+v", dra.Rails, want)
			}
			if r3 := dra.Rails[1]; r3.IfName != "" || r3.GIDIndex != 7 || len(r3.Addresses) != 0 || r3.GIDAddress.IsValid() {
				t.Fatalf("a DRA NIC without netdev or address: %+v", r3)
			}
			if len(dra.Containers) != 2 || len(dra.Containers[1].DriverDevices) != 1 ||
				dra.Containers[1].DriverDevices[0].NIC != "mlx5_2" || dra.Containers[1].DriverDevices[0].Claim.Driver != "dra.net" {
				t.Fatalf("DRA containers %+v", dra.Containers)
			}
		})
	}
	r := &railReadiness{placed: attached.NewPlacements(nil), leases: func() []ipam.Lease { return nil }, rdmaNetns: rdma.NetnsShared}
	if pods := r.pods(m); len(pods) != 0 {
		t.Fatalf("no table: %+v", pods)
	}
}

// TestDRAPodCondition: a pod whose RoCE NIC came from a dra.net claim gets
// rail.dev/RDMAReady True on the API server (fake clientset) when its
// interface is in its netns with the slice's address, the port ACTIVE,
// the GID at the index its container got, and the container holds the
// driver's uverbs node and raild's memlock; False naming the driver when
// the node is missing, and when the port goes down.
func TestDRAPodCondition(t *testing.T) {
	netnstest.RequireRoot(t, "creates a netns and device nodes")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	root, m := discovered(t, "lab-1x1", func(root string) error {
		return fakesys.WriteGIDs(root, "mlx5_0", 1, []string{"fe80::1", "::ffff:192.168.60.9"}, []string{"RoCE v2", "RoCE v2"})
	})
	nic := m.NICs[0]

	// the pod's netns, holding the NIC as the driver moved it in
	name := fmt.Sprintf("rdydra-%08x", rand.Uint32())
	h, err := netlink.NewHandleAt(netnstest.Named(t, name))
	must(err)
	t.Cleanup(h.Close)
	must(h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth7"}, PeerName: "peer7"}))
	peer, err := h.LinkByName("peer7")
	must(err)
	must(h.LinkSetUp(peer))
	link, err := h.LinkByName("eth7")
	must(err)
	must(h.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: net.ParseIP("192.168.60.9"), Mask: net.CIDRMask(24, 32)}}))
	must(h.LinkSetUp(link))

	// the container's own view: its limits and its root's device nodes
	proc := t.TempDir()
	dir := filepath.Join(proc, "4242")
	must(os.MkdirAll(filepath.Join(dir, "root/dev/infiniband"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "limits"), []byte("Max locked memory         unlimited            unlimited            bytes     \n"), 0o444))
	must(os.WriteFile(filepath.Join(dir, "stat"), []byte("4242 (app) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 880042 2711552 250\n"), 0o444))
	node := filepath.Join(dir, "root", nic.Uverbs.Path)
	must(unix.Mknod(node, unix.S_IFCHR|0o666, int(unix.Mkdev(nic.Uverbs.Major, nic.Uverbs.Minor))))

	held := podinfo.NewDRAHeld()
	dn := draNIC(m, nic.Name, "eth7", "ml/rdma", "192.168.60.9")
	held.Set("sb", podinfo.PodDRANICs{Namespace: "ml", Name: "trainer", UID: "uid-t", Netns: "/var/run/netns/" + name, NICs: []podinfo.DRANIC{dn}})

	kube := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "trainer", UID: "uid-t"}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	reports, err := startPodReport(ctx, &kubeclient.Clients{Kube: kube}, "node1", nil, nil)
	must(err)
	r := &railReadiness{placed: attached.NewPlacements(nil), leases: func() []ipam.Lease { return nil }, held: held, rdmaNetns: rdma.NetnsShared}
	r.containers = func(string) []nri.ContainerRecord {
		return []nri.ContainerRecord{{Name: "app", Pid: 4242, Start: 880042, Memlock: 1 << 40, GIDIndex: 1, DriverDevices: []nri.DriverDeviceRecord{{
			DeviceRecord: nri.DeviceRecord{Path: nic.Uverbs.Path, Major: int64(nic.Uverbs.Major), Minor: int64(nic.Uverbs.Minor)},
			NIC:          nic.Name, Driver: dn.Device.Driver, Claim: dn.Device.Claim}}}}
	}
	checker, err := readiness.NewChecker(root, proc)
	must(err)
	tracker, err := readiness.NewTracker(readiness.Options{Checker: checker, Pods: func() []readiness.Pod { return r.pods(m) }, Sink: reports})
	must(err)

	steps := []struct {
		name   string
		change func()
		status corev1.ConditionStatus
		reason string
		msgHas string
	}{
		{name: "ready", change: func() {}, status: corev1.ConditionTrue, reason: readiness.ReasonReady},
		{name: "driver's node missing", change: func() { must(os.Remove(node)) }, status: corev1.ConditionFalse,
			reason: readiness.ReasonDevicesMissing, msgHas: "the dra.net driver injects it"},
		{name: "node back", change: func() {
			must(unix.Mknod(node, unix.S_IFCHR|0o666, int(unix.Mkdev(nic.Uverbs.Major, nic.Uverbs.Minor))))
		}, status: corev1.ConditionTrue, reason: readiness.ReasonReady},
		{name: "port down", change: func() { must(fakesys.SetPortState(root, nic.RDMADevice(), 1, "DOWN")) },
			status: corev1.ConditionFalse, reason: readiness.ReasonPortNotActive},
	}
	for _, st := range steps {
		st.change()
		tracker.CheckAll()
		var got corev1.PodCondition
		deadline := time.Now().Add(30 * time.Second)
		for {
			pod, err := kube.CoreV1().Pods("ml").Get(ctx, "trainer", metav1.GetOptions{})
			must(err)
			for _, c := range pod.Status.Conditions {
				if string(c.Type) == readiness.ConditionType {
					got = c
				}
			}
			if got.Status == st.status && got.Reason == st.reason {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: condition %+v; want %s %s", st.name, got, st.status, st.reason)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if !strings.Contains(got.Message, st.msgHas) {
			t.Fatalf("%s: message %q lacks %q", st.name, got.Message, st.msgHas)
		}
		rep, ok := tracker.Report("ml", "trainer")
		if !ok || len(rep.Interfaces) != 1 || rep.Interfaces[0].DRA == nil || rep.Interfaces[0].DRA.Claim != "ml/rdma" ||
			rep.Interfaces[0].Addresses[0] != "192.168.60.9" || rep.Interfaces[0].GIDIndex == nil || *rep.Interfaces[0].GIDIndex != 1 {
			t.Fatalf("%s: doctor's report %+v", st.name, rep)
		}
	}
}
