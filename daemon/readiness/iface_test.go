package readiness

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netnstest"
)

// podNetns makes a netns of its own holding rail0 (a veth whose peer is up) (up or not, with
// addrs) and returns its path.
func podNetns(t *testing.T, up bool, addrs ...string) string {
	t.Helper()
	netnstest.RequireRoot(t, "creates a netns")
	name := fmt.Sprintf("rdy-%08x", rand.Uint32())
	ns := netnstest.Named(t, name)
	h, err := netlink.NewHandleAt(ns)
	must(t, err)
	t.Cleanup(h.Close)
	must(t, h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "rail0"}, PeerName: "peer0"}))
	peer, err := h.LinkByName("peer0")
	must(t, err)
	must(t, h.LinkSetUp(peer))
	link, err := h.LinkByName("rail0")
	must(t, err)
	for _, a := range addrs {
		p := netip.MustParsePrefix(a)
		must(t, h.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}))
	}
	if up {
		must(t, h.LinkSetUp(link))
	}
	return "/var/run/netns/" + name
}

func TestInterfaceChecks(t *testing.T) {
	lease := []netip.Prefix{netip.MustParsePrefix("192.168.50.7/24")}
	tests := []struct {
		name   string
		netns  func(t *testing.T) string
		ifname string
		want   map[string]api.CheckStatus
		reason string
		msgHas string
	}{
		{name: "up with its address", ifname: "rail0", netns: func(t *testing.T) string { return podNetns(t, true, "192.168.50.7/24") },
			want: map[string]api.CheckStatus{checkInterface: api.CheckPass, checkAddress: api.CheckPass}},
		{name: "also other addresses", ifname: "rail0",
			netns: func(t *testing.T) string { return podNetns(t, true, "10.1.1.1/16", "192.168.50.7/24") },
			want:  map[string]api.CheckStatus{checkInterface: api.CheckPass, checkAddress: api.CheckPass}},
		{name: "down", ifname: "rail0", netns: func(t *testing.T) string { return podNetns(t, false, "192.168.50.7/24") },
			want:   map[string]api.CheckStatus{checkInterface: api.CheckFail, checkAddress: api.CheckPass},
			reason: ReasonIfaceDown, msgHas: "rail0 is administratively down"},
		{name: "address gone", ifname: "rail0", netns: func(t *testing.T) string { return podNetns(t, true, "192.168.50.8/24") },
			want:   map[string]api.CheckStatus{checkInterface: api.CheckPass, checkAddress: api.CheckFail},
			reason: ReasonAddressMissing, msgHas: "rail0 lacks its lease address 192.168.50.7/24"},
		{name: "another prefix length", ifname: "rail0", netns: func(t *testing.T) string { return podNetns(t, true, "192.168.50.7/16") },
			want:   map[string]api.CheckStatus{checkInterface: api.CheckPass, checkAddress: api.CheckFail},
			reason: ReasonAddressMissing},
		{name: "NIC left the pod", ifname: "rail1", netns: func(t *testing.T) string { return podNetns(t, true) },
			want:   map[string]api.CheckStatus{checkInterface: api.CheckFail},
			reason: ReasonIfaceMissing, msgHas: "rail1 is not in the pod's netns"},
		{name: "netns gone", ifname: "rail0", netns: func(t *testing.T) string { return "/var/run/netns/rdy-never-made" },
			want:   map[string]api.CheckStatus{checkInterface: api.CheckFail},
			reason: ReasonNetnsGone, msgHas: "cannot open the pod's netns /var/run/netns/rdy-never-made"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Rail{Netns: tt.netns(t), IfName: tt.ifname, Addresses: lease}
			got := checker(t, machine(t, "lab-1x1"), "").inPod(r)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v; want %v", got, tt.want)
			}
			for _, c := range got {
				if c.Status != tt.want[c.Name] {
					t.Fatalf("check %+v; want %s", c, tt.want[c.Name])
				}
				if c.Status == api.CheckFail && (c.Reason != tt.reason || c.Fix == "") {
					t.Fatalf("failure %+v; want reason %s and a fix", c, tt.reason)
				}
			}
			if !strings.Contains(joinMessages(got), tt.msgHas) {
				t.Fatalf("messages %q lack %q", joinMessages(got), tt.msgHas)
			}
		})
	}
}

func TestRDMANetnsCheck(t *testing.T) {
	tests := []struct {
		name   string
		in     func(netnsPath, device string) (bool, error)
		want   api.CheckStatus
		msgHas string
	}{
		{"in the pod", func(string, string) (bool, error) { return true, nil }, api.CheckPass, "mlx5_0 is in the pod's netns"},
		{"back on the host", func(string, string) (bool, error) { return false, nil }, api.CheckFail, "mlx5_0 is not in the pod's netns"},
		{"unreadable", func(string, string) (bool, error) { return false, errors.New("operation not supported") }, api.CheckFail,
			"cannot list the RDMA devices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checker(t, machine(t, "lab-1x1"), "")
			c.rdmaIn = tt.in
			got := c.rdmaNetns(Rail{Netns: "/var/run/netns/x", IfName: "rail0", Device: "mlx5_0", Exclusive: true})
			if got.Status != tt.want || !strings.Contains(got.Message, tt.msgHas) ||
				(got.Status == api.CheckFail && got.Reason != ReasonRDMANotInPod) {
				t.Fatalf("got %+v; want %s with %q", got, tt.want, tt.msgHas)
			}
		})
	}
}

// TestRDMANetnsReal asks the kernel through the checker's real lookup:
// this host has no RDMA device, so a pod netns never holds the one a rail
// names, and the check fails either way (no device, or no RDMA netlink).
func TestRDMANetnsReal(t *testing.T) {
	c := checker(t, machine(t, "lab-1x1"), "")
	for _, path := range []string{podNetns(t, true), "/var/run/netns/rdy-never-made"} {
		got := c.rdmaNetns(Rail{Netns: path, IfName: "rail0", Device: "mlx5_0", Exclusive: true})
		if got.Status != api.CheckFail || got.Reason != ReasonRDMANotInPod {
			t.Fatalf("%s: %+v", path, got)
		}
	}
}
