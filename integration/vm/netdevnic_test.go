package vm

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

var (
	virtioLink = regexp.MustCompile(`^\.\./\.\./\.\./virtio\d+$`)
	virtioDir  = regexp.MustCompile(`/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]/virtio\d+$`)
)

// netdevShape is what a virtio-net netdev's sysfs looks like, past the
// numbers the kernel or QEMU chooses (PCI address, virtio index).
type netdevShape struct {
	deviceLink  bool   // `device` is ../../../virtio<N>
	underPCI    bool   // virtio<N> sits in a PCI function's directory
	virtioDrv   string // the virtio device's driver
	functionDrv string // its PCI function's driver
	kind        string // the netdev's type (1: Ethernet)
}

func shapeOf(t *testing.T, root, netdev string) netdevShape {
	t.Helper()
	dir := filepath.Join(root, "sys/class/net", netdev)
	link, err := os.Readlink(filepath.Join(dir, "device"))
	if err != nil {
		t.Fatalf("%s/device: %v", dir, err)
	}
	dev, err := filepath.EvalSymlinks(filepath.Join(dir, "device"))
	if err != nil {
		t.Fatalf("%s/device: %v", dir, err)
	}
	driver := func(p string) string {
		target, err := os.Readlink(filepath.Join(p, "driver"))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return filepath.Base(target)
	}
	return netdevShape{deviceLink: virtioLink.MatchString(link), underPCI: virtioDir.MatchString(dev),
		virtioDrv: driver(dev), functionDrv: driver(filepath.Dir(dev)), kind: readAttr(filepath.Join(dir, "type"))}
}

// TestGuestNICIsANetdevNIC: the guest's virtio-net NIC, which has no RDMA
// device, is a netdev-only NIC when netdev NICs count (a softRoCE node):
// named by its netdev, at its PCI function, Ethernet, its state ACTIVE
// (up); discovery without them does not list it. fakesys' softroce-vm
// writes its virtio-net NICs in the kernel's shape: `device` a link to
// ../../../virtio<N>, that device below the PCI function, bound to
// virtio_net, the function to virtio-pci.
func TestGuestNICIsANetdevNIC(t *testing.T) {
	guestBoot(t)
	nic := useGuestNIC(t)
	m, err := topology.DiscoverWith("/", topology.Options{NetdevNICs: true})
	if err != nil {
		t.Fatal(err)
	}
	n, ok := m.NICByName(nic)
	function := filepath.Base(filepath.Dir(mustEval(t, "/sys/class/net/"+nic+"/device")))
	if !ok || !n.NetdevOnly || n.Netdev != nic || n.PCI != function || n.LinkLayer != topology.Ethernet || n.State != topology.PortActive {
		t.Errorf("the guest NIC %s as discovered: %+v (found %v), want netdev-only at %s, Ethernet, ACTIVE", nic, n, ok, function)
	}
	if bare, err := topology.Discover("/"); err != nil {
		t.Fatal(err)
	} else if _, ok := bare.NICByName(nic); ok {
		t.Errorf("Discover without netdev NICs lists %s", nic)
	}
	fakeRoot := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.Write(fakeRoot, "softroce-vm", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	kernel, fake := shapeOf(t, "/", nic), shapeOf(t, fakeRoot, "eth1")
	want := netdevShape{deviceLink: true, underPCI: true, virtioDrv: "virtio_net", functionDrv: "virtio-pci", kind: "1"}
	if kernel != want {
		t.Errorf("the guest's %s: %+v, want %+v (the test's idea of virtio-net is wrong)", nic, kernel, want)
	}
	if fake != kernel {
		t.Errorf("fakesys' eth1: %+v, the kernel's %s: %+v", fake, nic, kernel)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return real
}
