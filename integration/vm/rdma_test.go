package vm

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// TestSystemNetnsMode: pkg/rdma reads the mode the guest was booted in,
// and it agrees with ib_core's module parameter.
func TestSystemNetnsMode(t *testing.T) {
	want := guestBoot(t)
	got, err := rdma.SystemNetnsMode()
	if err != nil {
		t.Fatalf("SystemNetnsMode: %v", err)
	}
	if got != want {
		t.Errorf("SystemNetnsMode = %q, want %q (this boot's ib_core.netns_mode)", got, want)
	}
	param, err := os.ReadFile("/sys/module/ib_core/parameters/netns_mode")
	if err != nil {
		t.Fatalf("read ib_core's netns_mode: %v", err)
	}
	wantParam := map[rdma.NetnsMode]string{rdma.NetnsShared: "Y", rdma.NetnsExclusive: "N"}[want]
	if p := strings.TrimSpace(string(param)); p != wantParam {
		t.Errorf("ib_core netns_mode parameter = %q, want %q in the %s boot", p, wantParam, want)
	}
}

// TestMoveDeviceRefusedInSharedMode: in shared mode the kernel refuses
// to move an RDMA device, and every netns keeps seeing it.
func TestMoveDeviceRefusedInSharedMode(t *testing.T) {
	requireBoot(t, rdma.NetnsShared)
	netdev, _ := addVethPair(t)
	dev := netnstest.UniqueName(t, "rxs")
	addRxe(t, rdmaHandle(t, nil), dev, netdev)
	pod := newNetns(t)

	err := rdma.MoveDevice(dev, "", pod.Path())
	if err == nil {
		t.Fatal("MoveDevice in shared mode succeeded, want the kernel's refusal")
	}
	if !errors.Is(err, unix.EOPNOTSUPP) || !strings.Contains(err.Error(), "exclusive netns mode") {
		t.Errorf("MoveDevice = %v, want EOPNOTSUPP and a hint at exclusive netns mode", err)
	}
	for where, h := range map[string]*netlink.Handle{"guest": rdmaHandle(t, nil), "pod": rdmaHandle(t, pod)} {
		if !slices.Contains(rdmaDevices(t, h), dev) {
			t.Errorf("shared mode: the %s netns does not see %s", where, dev)
		}
	}
}

// TestMoveDeviceExclusive: in exclusive mode MoveDevice moves an rxe into
// a netns and back, reports a device that is not in the source netns as
// ErrDeviceNotFound, and the kernel hands the device back when the netns
// dies. The rxe sits on a netdev that stays in the guest's netns: moving
// an rxe's own netdev destroys the rxe (see TestAttachMoveOfRxeNetdev).
func TestMoveDeviceExclusive(t *testing.T) {
	requireBoot(t, rdma.NetnsExclusive)
	netdev, _ := addVethPair(t)
	dev := netnstest.UniqueName(t, "rxx")
	guest := rdmaHandle(t, nil)
	addRxe(t, guest, dev, netdev)
	pod := newNetns(t)
	inPod := rdmaHandle(t, pod)

	steps := []struct {
		name             string
		move             func() error
		wantErr          error
		inGuest, inPodNs bool
	}{
		{"into the pod", func() error { return rdma.MoveDevice(dev, "", pod.Path()) }, nil, false, true},
		{"from the guest again", func() error { return rdma.MoveDevice(dev, "", pod.Path()) }, rdma.ErrDeviceNotFound, false, true},
		{"back to the guest", func() error { return rdma.MoveDevice(dev, pod.Path(), "") }, nil, true, false},
		{"into the pod once more", func() error { return rdma.MoveDevice(dev, "", pod.Path()) }, nil, false, true},
	}
	for _, s := range steps {
		err := s.move()
		if (s.wantErr == nil && err != nil) || (s.wantErr != nil && !errors.Is(err, s.wantErr)) {
			t.Fatalf("%s: MoveDevice = %v, want %v", s.name, err, s.wantErr)
		}
		if got := slices.Contains(rdmaDevices(t, guest), dev); got != s.inGuest {
			t.Errorf("%s: guest netns sees %s = %v, want %v", s.name, dev, got, s.inGuest)
		}
		if got := slices.Contains(rdmaDevices(t, inPod), dev); got != s.inPodNs {
			t.Errorf("%s: pod netns sees %s = %v, want %v", s.name, dev, got, s.inPodNs)
		}
		if got := discovers(t, dev); got != s.inGuest {
			t.Errorf("%s: topology.Discover(/) in the guest netns lists %s = %v, want %v", s.name, dev, got, s.inGuest)
		}
	}

	// The pod netns dies with the device inside: the kernel returns it.
	_ = pod.Close()
	if err := testutils.UnmountNS(pod); err != nil {
		t.Fatalf("remove pod netns: %v", err)
	}
	inPod.Close()
	waitFor(t, dev+" back in the guest netns after its pod netns died", func() bool {
		return slices.Contains(rdmaDevices(t, guest), dev)
	})
}

// discovers reports whether topology.Discover("/") lists dev: in
// exclusive mode sysfs shows a device only to the netns that holds it.
func discovers(t *testing.T, dev string) bool {
	t.Helper()
	m, err := topology.Discover("/")
	if err != nil {
		t.Fatalf("Discover(/): %v", err)
	}
	return slices.ContainsFunc(m.NICs, func(n topology.NIC) bool { return n.Name == dev })
}
