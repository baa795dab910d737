package nri

import (
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
)

// TestDRAContainersRecorded: the readiness checks see a DRA NIC pod like a
// leased one. The DRAHeld record carries the pod's UID, its netns (from
// the sandbox's Linux namespaces) and GPUs; a container whose claims hold
// the NIC is recorded although raild injected no device node, with the
// driver's uverbs node of its NIC (each once), the memlock and the GID
// index it got; a container without a claim is not; the readiness
// listener hears of the pod once the kubelet answered.
func TestDRAContainersRecorded(t *testing.T) {
	root := t.TempDir()
	writeGIDs(t, root, "mlx5_1", []string{"fe80:0000:0000:0000:0a00:27ff:fe00:0001", "0000:0000:0000:0000:0000:ffff:0a38:0005"}, nil)
	nics := nicSlices{
		"pci-0000-31-00-0": {RDMADevice: "mlx5_1", IfName: "eth1", PCI: "0000:31:00.0", Addrs: []netip.Addr{netip.MustParseAddr("10.56.0.5")}},
		"pci-0000-33-00-0": {RDMADevice: "mlx5_3", IfName: "eth3", PCI: "0000:33:00.0"},
	}
	_, kubelet := podinfotest.Kubelet(t, []podinfotest.Pod{{Namespace: "ml", Name: "p-s1", Containers: []podinfotest.Container{
		{Name: "trainer", Claims: []podinfotest.Claim{nicClaim("rdma", "pci-0000-31-00-0", "pci-0000-33-00-0")}},
		{Name: "one", Claims: []podinfotest.Claim{nicClaim("rdma1", "pci-0000-31-00-0")}},
		{Name: "sidecar"},
	}}})
	p, held, _ := newDRAPlugin(t, Config{Memlock: "8Mi"}, root, kubelet, nics, nil)
	var mu sync.Mutex
	var told []string
	p.changed = func(sandbox string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, sandbox)
	}
	sandbox := pod("s1", "ml", nil)
	sandbox.Uid = "uid-1"
	sandbox.Linux = &nriapi.LinuxPodSandbox{Namespaces: []*nriapi.LinuxNamespace{
		{Type: "ipc", Path: "/proc/9/ns/ipc"}, {Type: "network", Path: "/var/run/netns/cni-1234"}}}
	if err := p.RunPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	<-p.kubelet.start(sandbox).done
	got, ok := held.Pod("s1")
	if !ok || got.UID != "uid-1" || got.Netns != "/var/run/netns/cni-1234" {
		t.Fatalf("DRAHeld = %+v, %v; want uid-1 in /var/run/netns/cni-1234", got, ok)
	}
	mu.Lock()
	if len(told) < 2 || told[len(told)-1] != "s1" { // RunPodSandbox, then the answer
		t.Errorf("readiness told %v; want s1 again after the kubelet's answer", told)
	}
	mu.Unlock()
	for _, name := range []string{"trainer", "one", "sidecar"} {
		if _, _, err := p.CreateContainer(t.Context(), sandbox, ctr(name)); err != nil {
			t.Fatal(err)
		}
	}
	recs := p.records.SandboxContainers("s1")
	slices.SortFunc(recs, func(a, b ContainerRecord) int { return strings.Compare(a.Name, b.Name) })
	if len(recs) != 2 {
		t.Fatalf("records %+v; want one and trainer only", recs)
	}
	one := ContainerRecord{ID: "c-one", Name: "one", Memlock: 8 << 20, GIDIndex: 1, Devices: []DeviceRecord{},
		DriverDevices: []DriverDeviceRecord{{DeviceRecord: DeviceRecord{Path: "/dev/infiniband/uverbs1", Major: 231, Minor: 193},
			NIC: "mlx5_1", Driver: podinfo.DefaultDRANICDriver, Claim: "ml/rdma1"}}}
	if !reflect.DeepEqual(recs[0], one) {
		t.Fatalf("record\n got %+v\nwant %+v", recs[0], one)
	}
	// two NICs, one without an address: no index agreed over both
	want := ContainerRecord{ID: "c-trainer", Name: "trainer", Memlock: 8 << 20, GIDIndex: -1, Devices: []DeviceRecord{},
		DriverDevices: []DriverDeviceRecord{
			{DeviceRecord: DeviceRecord{Path: "/dev/infiniband/uverbs1", Major: 231, Minor: 193}, NIC: "mlx5_1", Driver: podinfo.DefaultDRANICDriver, Claim: "ml/rdma"},
			{DeviceRecord: DeviceRecord{Path: "/dev/infiniband/uverbs3", Major: 231, Minor: 195}, NIC: "mlx5_3", Driver: podinfo.DefaultDRANICDriver, Claim: "ml/rdma"},
		}}
	if !reflect.DeepEqual(recs[1], want) {
		t.Fatalf("record\n got %+v\nwant %+v", recs[1], want)
	}
}
