package vm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/topology"
)

// TestDiscoverSeesRxe: pkg/topology reads a real kernel's Soft-RoCE device
// as a virtual NIC whose netdev is its parent, and reports char device
// numbers equal to the real device nodes' (rdma_cm's minor is above 255
// here, which exercises the high-minor part of CharDev.Rdev).
func TestDiscoverSeesRxe(t *testing.T) {
	guestBoot(t)
	netdev, _ := addVethPair(t)
	addRxe(t, rdmaHandle(t, nil), "rxe0", netdev)

	m, err := topology.Discover("/")
	if err != nil {
		t.Fatalf("Discover(/): %v", err)
	}
	nic := findNIC(t, m, "rxe0")
	parent, err := os.ReadFile("/sys/class/infiniband/rxe0/parent")
	if err != nil {
		t.Fatalf("read the kernel's parent file: %v", err)
	}
	var portNetdevs []string
	if len(nic.Ports) == 1 {
		portNetdevs = nic.Ports[0].Netdevs
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"kernel's parent file", strings.TrimSpace(string(parent)), netdev},
		{"Virtual", nic.Virtual, true},
		{"PCI", nic.PCI, ""},
		{"Netdev", nic.Netdev, netdev},
		{"State", nic.State, "ACTIVE"},
		{"LinkLayer", nic.LinkLayer, topology.Ethernet},
		{"number of ports", len(nic.Ports), 1},
		{"port 1 netdevs", portNetdevs, []string{netdev}},
		{"uverbs found", nic.Uverbs != nil, true},
		{"rdma_cm found", m.RdmaCM != nil, true},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("rxe0 %s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
	for _, p := range m.Problems {
		if p.Device == "rxe0" || p.Device == "rdma_cm" || p.Device == nic.UverbsName {
			t.Errorf("discovery problem for a healthy rxe: %s: %s", p.Device, p.Reason)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	devs := []struct {
		what string
		dev  *topology.CharDev
	}{
		{"uverbs", nic.Uverbs},
		{"rdma_cm", m.RdmaCM},
		{"umad of port 1", nic.Ports[0].Umad},
	}
	for _, d := range devs {
		t.Run(d.what, func(t *testing.T) { assertMatchesDevNode(t, d.dev) })
	}
	if nic.Ports[0].Issm != nil {
		t.Errorf("an Ethernet port has no issm device, Discover reports %+v", nic.Ports[0].Issm)
	}
}

// assertMatchesDevNode compares a discovered char device with the node the
// kernel made for it in devtmpfs.
func assertMatchesDevNode(t *testing.T, dev *topology.CharDev) {
	t.Helper()
	if dev == nil {
		t.Fatal("not discovered")
	}
	if want := filepath.Join("/dev/infiniband", dev.Name); dev.Path != want {
		t.Errorf("Path = %s, want %s", dev.Path, want)
	}
	var st unix.Stat_t
	if err := unix.Stat(dev.Path, &st); err != nil {
		t.Fatalf("stat %s: %v", dev.Path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		t.Fatalf("%s is not a char device (mode %o)", dev.Path, st.Mode)
	}
	if dev.Major != unix.Major(st.Rdev) || dev.Minor != unix.Minor(st.Rdev) {
		t.Errorf("%s: discovered %d:%d, the node is %d:%d", dev.Name, dev.Major, dev.Minor, unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
	if dev.Rdev() != st.Rdev {
		t.Errorf("%s: Rdev() = %#x, the node's st_rdev = %#x", dev.Name, dev.Rdev(), st.Rdev)
	}
	t.Logf("%s %s = %d:%d", dev.Name, dev.Path, dev.Major, dev.Minor)
}

func findNIC(t *testing.T, m *topology.Machine, name string) topology.NIC {
	t.Helper()
	var names []string
	for _, n := range m.NICs {
		if n.Name == name {
			return n
		}
		names = append(names, n.Name)
	}
	t.Fatalf("Discover(/) did not find %s; it found %v (problems: %+v)", name, names, m.Problems)
	return topology.NIC{}
}
