package vm

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/rdma"
)

// TestAttachMoveCarriesRDMADevice: pkg/attach in move mode with
// RDMANetns exclusive on a real exclusive-mode kernel puts the netdev (the
// guest's virtio NIC, a PCI device like a real NIC's, which the kernel
// returns rather than deletes when a netns dies) and the RDMA device into
// the pod, and Detach brings both back, also after the pod netns died
// first. The rxe sits on a veth that stays in the guest netns, since
// moving an rxe's own netdev destroys the rxe; a hardware NIC's RDMA
// device survives the move of its netdev.
func TestAttachMoveCarriesRDMADevice(t *testing.T) {
	requireBoot(t, rdma.NetnsExclusive)
	tests := []struct {
		name         string
		podDiesFirst bool
	}{
		{"detach with the pod alive", false},
		{"pod netns died before detach", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nic := useGuestNIC(t)
			rxeNetdev, _ := addVethPair(t)
			dev := netnstest.UniqueName(t, "rxa")
			guest := rdmaHandle(t, nil)
			addRxe(t, guest, dev, rxeNetdev)
			setMTU(t, nic, 1400)
			before := hostLinkState(t, nic)
			pod := newNetns(t)
			spec := attach.Spec{Mode: attach.ModeMove, Parent: nic, Name: "rail0",
				Addresses: []netip.Prefix{netip.MustParsePrefix("10.77.0.5/24")}, MTU: 1300,
				RDMADevice: dev, RDMANetns: rdma.NetnsExclusive}

			all, err := attach.AttachAll(pod.Path(), []attach.Spec{spec})
			if err != nil {
				t.Fatalf("Attach: %v", err)
			}
			res := all[0].Result
			if res.Name != "rail0" || res.MTU != 1300 {
				t.Errorf("Attach result %+v, want rail0 with MTU 1300", res)
			}
			inPod := rdmaHandle(t, pod)
			assertDevice(t, "after Attach", guest, inPod, dev, false, true)
			if _, err := netlink.LinkByName(nic); !isNotFound(err) {
				t.Errorf("after Attach %s is still in the guest netns (err %v)", nic, err)
			}
			if links := linkNames(t, pod); !slices.Contains(links, "rail0") {
				t.Errorf("after Attach the pod has %v, want rail0 among them", links)
			}

			if tt.podDiesFirst {
				// Nothing may hold the netns (no open handle), or it never dies.
				inPod.Close()
				_ = pod.Close()
				if err := testutils.UnmountNS(pod); err != nil {
					t.Fatalf("remove pod netns: %v", err)
				}
				waitFor(t, dev+" and rail0 back in the guest after the pod netns died", func() bool {
					_, err := netlink.LinkByName("rail0")
					return err == nil && slices.Contains(rdmaDevices(t, guest), dev)
				})
			}
			if err := attach.Detach(pod.Path(), spec); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			if after := hostLinkState(t, nic); after != before {
				t.Errorf("after Detach %s is %+v, want %+v as before Attach", nic, after, before)
			}
			if !slices.Contains(rdmaDevices(t, guest), dev) {
				t.Errorf("after Detach the guest netns does not see %s", dev)
			}
			if !tt.podDiesFirst {
				assertDevice(t, "after Detach", guest, inPod, dev, true, false)
			}
		})
	}
}

// TestAttachMoveOfRxeNetdev records what the kernel does when pkg/attach
// moves the netdev an rxe is bound to: rdma_rxe unregisters the device as
// soon as its netdev leaves the netns, in both modes, and does not bring
// it back. So in exclusive mode Attach finds no RDMA device to move, fails
// and puts the netdev back as it was; in shared mode the netdev moves and
// the pod gets no RDMA device. A move-mode attachment of an rxe-backed
// netdev cannot keep its rxe (docs/limitations.md).
func TestAttachMoveOfRxeNetdev(t *testing.T) {
	boot := guestBoot(t)
	tests := []struct {
		boot    rdma.NetnsMode
		wantErr error
	}{
		{rdma.NetnsExclusive, rdma.ErrDeviceNotFound},
		{rdma.NetnsShared, nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.boot), func(t *testing.T) {
			if tt.boot != boot {
				t.Skipf("case for the %s boot", tt.boot)
			}
			nic := useGuestNIC(t)
			dev := netnstest.UniqueName(t, "rxn")
			guest := rdmaHandle(t, nil)
			addRxe(t, guest, dev, nic)
			before := hostLinkState(t, nic)
			pod := newNetns(t)
			inPod := rdmaHandle(t, pod)
			spec := attach.Spec{Mode: attach.ModeMove, Parent: nic, Name: "rail0",
				Addresses: []netip.Prefix{netip.MustParsePrefix("10.77.1.5/24")}, RDMADevice: dev, RDMANetns: tt.boot}

			_, err := attach.AttachAll(pod.Path(), []attach.Spec{spec})
			if tt.wantErr == nil && err != nil {
				t.Fatalf("Attach: %v", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Attach = %v, want an error wrapping %v", err, tt.wantErr)
			}
			t.Logf("Attach of %s (carrying %s): %v", nic, dev, err)
			assertDevice(t, "after Attach", guest, inPod, dev, false, false)
			if err := attach.Detach(pod.Path(), spec); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			if after := hostLinkState(t, nic); after != before {
				t.Errorf("after Detach %s is %+v, want %+v as before Attach", nic, after, before)
			}
			assertDevice(t, "after Detach", guest, inPod, dev, false, false)
		})
	}
}

// TestAttachMoveRDMARefusedInSharedMode: a spec that asks for the RDMA
// device to move on a shared-mode kernel fails at the kernel's refusal and
// leaves the netdev and the device where they were.
func TestAttachMoveRDMARefusedInSharedMode(t *testing.T) {
	requireBoot(t, rdma.NetnsShared)
	nic, _ := addVethPair(t)
	rxeNetdev, _ := addVethPair(t)
	dev := netnstest.UniqueName(t, "rxr")
	guest := rdmaHandle(t, nil)
	addRxe(t, guest, dev, rxeNetdev)
	before := hostLinkState(t, nic)
	pod := newNetns(t)
	spec := attach.Spec{Mode: attach.ModeMove, Parent: nic, Name: "rail0",
		Addresses: []netip.Prefix{netip.MustParsePrefix("10.77.2.5/24")}, RDMADevice: dev, RDMANetns: rdma.NetnsExclusive}

	_, err := attach.AttachAll(pod.Path(), []attach.Spec{spec})
	if !errors.Is(err, unix.EOPNOTSUPP) {
		t.Fatalf("Attach = %v, want the kernel's EOPNOTSUPP for an RDMA move in shared mode", err)
	}
	if after := hostLinkState(t, nic); after != before {
		t.Errorf("after the failed Attach %s is %+v, want %+v", nic, after, before)
	}
	if links := linkNames(t, pod); !slices.Equal(links, []string{"lo"}) {
		t.Errorf("after the failed Attach the pod holds %v, want only lo", links)
	}
	assertDevice(t, "after the failed Attach", guest, rdmaHandle(t, pod), dev, true, true)
}

// linkNames lists the links in n through a handle closed at once (an
// open netlink socket would keep the netns alive).
func linkNames(t *testing.T, n ns.NetNS) []string {
	t.Helper()
	h, err := netlink.NewHandleAt(netns.NsHandle(int(n.Fd())))
	if err != nil {
		t.Fatalf("netlink handle in %s: %v", n.Path(), err)
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		t.Fatalf("list links in %s: %v", n.Path(), err)
	}
	names := make([]string, 0, len(links))
	for _, l := range links {
		names = append(names, l.Attrs().Name)
	}
	return names
}

// linkState is what Detach must restore on a moved netdev.
type linkState struct {
	MTU   int
	Up    bool
	Alias string
}

func hostLinkState(t *testing.T, name string) linkState {
	t.Helper()
	link, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatalf("find %s in the guest netns: %v", name, err)
	}
	a := link.Attrs()
	return linkState{MTU: a.MTU, Up: a.Flags&net.FlagUp != 0, Alias: a.Alias}
}

func setMTU(t *testing.T, name string, mtu int) {
	t.Helper()
	link, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	if err := netlink.LinkSetMTU(link, mtu); err != nil {
		t.Fatalf("set %s mtu %d: %v", name, mtu, err)
	}
}

// assertDevice checks which of the two netns see the RDMA device dev.
func assertDevice(t *testing.T, when string, guest, pod *netlink.Handle, dev string, wantGuest, wantPod bool) {
	t.Helper()
	if got := slices.Contains(rdmaDevices(t, guest), dev); got != wantGuest {
		t.Errorf("%s: guest netns sees %s = %v, want %v", when, dev, got, wantGuest)
	}
	if got := slices.Contains(rdmaDevices(t, pod), dev); got != wantPod {
		t.Errorf("%s: pod netns sees %s = %v, want %v", when, dev, got, wantPod)
	}
}
