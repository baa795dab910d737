package readiness

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

var draClaim = &DRAClaim{Driver: "dra.net", Claim: "ml/nic-claim", Device: "dra.net/node-a/mlx5_0"}

// bare is an address a DRA driver's slice lists, as serve makes it.
func bare(s string) netip.Prefix {
	a := netip.MustParseAddr(s)
	return netip.PrefixFrom(a, a.BitLen())
}

// TestDRAInterfaceChecks: a DRA rail is found in the pod by the netdev
// name the slice gives, and its slice addresses match whatever prefix
// length the interface holds them with (the slice lists bare addresses);
// a lease's keeps matching with its prefix length.
func TestDRAInterfaceChecks(t *testing.T) {
	tests := []struct {
		name   string
		addrs  []string // on rail0 in the pod
		rail   Rail
		want   map[string]api.CheckStatus
		reason string
		msgHas string
		fixHas string
	}{
		{name: "slice address held with its subnet's prefix", addrs: []string{"192.168.50.7/24"},
			rail: Rail{IfName: "rail0", Addresses: []netip.Prefix{bare("192.168.50.7")}, Match: MatchAddressOnly, DRA: draClaim},
			want: map[string]api.CheckStatus{checkInterface: api.CheckPass, checkAddress: api.CheckPass}, msgHas: "rail0 holds 192.168.50.7"},
		{name: "IPv4 and IPv6 from the slice", addrs: []string{"192.168.50.7/24", "fd00::7/64"},
			rail: Rail{IfName: "rail0", Addresses: []netip.Prefix{bare("192.168.50.7"), bare("fd00::7")}, Match: MatchAddressOnly, DRA: draClaim},
			want: map[string]api.CheckStatus{checkInterface: api.CheckPass, checkAddress: api.CheckPass}},
		{name: "the same address as a lease compares its prefix", addrs: []string{"192.168.50.7/24"},
			rail:   Rail{IfName: "rail0", Addresses: []netip.Prefix{bare("192.168.50.7")}, Match: MatchPrefix},
			want:   map[string]api.CheckStatus{checkInterface: api.CheckPass, checkAddress: api.CheckFail},
			reason: ReasonAddressMissing, msgHas: "lacks its lease address 192.168.50.7/32"},
		{name: "slice address gone", addrs: []string{"192.168.50.8/24"},
			rail:   Rail{IfName: "rail0", Addresses: []netip.Prefix{bare("192.168.50.7")}, Match: MatchAddressOnly, DRA: draClaim},
			want:   map[string]api.CheckStatus{checkInterface: api.CheckPass, checkAddress: api.CheckFail},
			reason: ReasonAddressMissing, msgHas: "rail0 lacks the address the dra.net driver's ResourceSlice lists 192.168.50.7", fixHas: "claim's status"},
		{name: "slice lists no address", addrs: nil,
			rail: Rail{IfName: "rail0", Match: MatchAddressOnly, DRA: draClaim},
			want: map[string]api.CheckStatus{checkInterface: api.CheckPass, checkAddress: api.CheckSkip}, msgHas: "no address to look for"},
		{name: "driver never moved it in", addrs: []string{"192.168.50.7/24"},
			rail:   Rail{IfName: "eth3", PCI: "0000:1d:00.0", Addresses: []netip.Prefix{bare("192.168.50.7")}, Match: MatchAddressOnly, DRA: draClaim},
			want:   map[string]api.CheckStatus{checkInterface: api.CheckFail},
			reason: ReasonIfaceMissing, msgHas: "eth3 is not in the pod's netns", fixHas: "the dra.net driver did not move the NIC of claim ml/nic-claim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.rail.Netns = podNetns(t, true, tt.addrs...)
			got := checker(t, machine(t, "lab-1x1"), "").inPod(tt.rail)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v; want %v", got, tt.want)
			}
			for _, c := range got {
				if c.Status != tt.want[c.Name] {
					t.Fatalf("check %+v; want %s", c, tt.want[c.Name])
				}
				if c.Status == api.CheckFail && (c.Reason != tt.reason || !strings.Contains(c.Fix, tt.fixHas) || c.Fix == "") {
					t.Fatalf("failure %+v; want reason %s and a fix with %q", c, tt.reason, tt.fixHas)
				}
			}
			if !strings.Contains(joinMessages(got), tt.msgHas) {
				t.Fatalf("messages %q lack %q", joinMessages(got), tt.msgHas)
			}
		})
	}
}

// TestLinkOfPCI: a DRA rail renamed by its claim is found by its PCI
// function, only when exactly one link has it as parent device.
func TestLinkOfPCI(t *testing.T) {
	link := func(name, dev, bus string) netlink.Link {
		return &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: name, ParentDev: dev, ParentDevBus: bus}}
	}
	tests := []struct {
		name  string
		links []netlink.Link
		want  string
	}{
		{"renamed", []netlink.Link{link("lo", "", ""), link("eth0", "", ""), link("roce0", "0000:1d:00.0", "pci")}, "roce0"},
		{"case of the address", []netlink.Link{link("roce0", "0000:1D:00.0", "pci")}, "roce0"},
		{"not in the pod", []netlink.Link{link("eth0", "", ""), link("x", "0000:1e:00.0", "pci")}, ""},
		{"a netdev per port: the name must tell", []netlink.Link{link("ib0", "0000:1d:00.0", "pci"), link("ib1", "0000:1d:00.0", "pci")}, ""},
		{"another bus", []netlink.Link{link("v0", "0000:1d:00.0", "vmbus")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := linkOfPCI(tt.links, "0000:1d:00.0")
			got := ""
			if ok {
				got = l.Attrs().Name
			}
			if got != tt.want {
				t.Fatalf("got %q; want %q", got, tt.want)
			}
		})
	}
}

// TestDRARailRun: a DRA NIC without a netdev (an RDMA-only device) is
// checked by its port alone, named by it; the GID check looks only for
// the address the containers' index was worked out from.
func TestDRARailRun(t *testing.T) {
	root := machine(t, "lab-1x1")
	gids("fe80::1", "fe80::1", "::ffff:10.0.0.1", "::ffff:192.168.50.7")(t, root)
	c := checker(t, root, "")
	tests := []struct {
		name string
		rail Rail
		want map[string][]api.CheckStatus
		sub  string
	}{
		{name: "no netdev: port only", rail: Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, GIDIndex: 3, DRA: draClaim,
			Match: MatchAddressOnly, Addresses: []netip.Prefix{bare("192.168.50.7")}, GIDAddress: netip.MustParseAddr("192.168.50.7")},
			want: map[string][]api.CheckStatus{checkInterface: {api.CheckSkip}, checkPort: {api.CheckPass}, checkLinkLayer: {api.CheckPass},
				checkGID: {api.CheckPass}}, sub: "mlx5_0 port 1"},
		{name: "GID of the chosen address only", rail: Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, GIDIndex: 3, DRA: draClaim,
			Match: MatchAddressOnly, Addresses: []netip.Prefix{bare("192.168.50.7"), bare("fd00::7")}, GIDAddress: netip.MustParseAddr("192.168.50.7")},
			want: map[string][]api.CheckStatus{checkInterface: {api.CheckSkip}, checkPort: {api.CheckPass}, checkLinkLayer: {api.CheckPass},
				checkGID: {api.CheckPass}}, sub: "mlx5_0 port 1"},
		{name: "every address without a chosen one", rail: Rail{Device: "mlx5_0", Port: 1, LinkLayer: topology.Ethernet, GIDIndex: 3, DRA: draClaim,
			Match: MatchAddressOnly, Addresses: []netip.Prefix{bare("192.168.50.7"), bare("fd00::7")}},
			want: map[string][]api.CheckStatus{checkInterface: {api.CheckSkip}, checkPort: {api.CheckPass}, checkLinkLayer: {api.CheckPass},
				checkGID: {api.CheckPass, api.CheckFail}}, sub: "mlx5_0 port 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Run(Pod{Rails: []Rail{tt.rail}})
			got := map[string][]api.CheckStatus{}
			for _, ch := range res.Checks {
				got[ch.Name] = append(got[ch.Name], ch.Status)
				if ch.Subject != tt.sub {
					t.Fatalf("check %+v: subject want %q", ch, tt.sub)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v; want %v", got, tt.want)
			}
			for name, want := range tt.want {
				if strings.Join(statusNames(got[name]), ",") != strings.Join(statusNames(want), ",") {
					t.Fatalf("%s: got %v; want %v (all %+v)", name, got[name], want, res.Checks)
				}
			}
		})
	}
}

func statusNames(s []api.CheckStatus) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}

// TestDriverDeviceChecks: a container holding a DRA NIC must hold the
// uverbs node its driver injects; a missing one fails naming the claim,
// the NIC and the driver (never raild's injection), with the memlock
// check beside it.
func TestDriverDeviceChecks(t *testing.T) {
	uverbs := Device{Path: "/dev/infiniband/uverbs0", Major: 231, Minor: 192}
	drv := DriverDevice{Device: uverbs, NIC: "mlx5_0", Claim: *draClaim}
	const want = 1 << 40
	tests := []struct {
		name   string
		has    []Device
		ctr    Container
		status map[string]api.CheckStatus
		msgHas string
		fixHas string
	}{
		{name: "driver injected it", has: []Device{uverbs},
			ctr:    Container{Name: "app", Pid: 100, DriverDevices: []DriverDevice{drv}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckPass, checkMemlock: api.CheckPass}, msgHas: "holds /dev/infiniband/uverbs0"},
		{name: "driver did not inject it", has: nil,
			ctr:    Container{Name: "app", Pid: 100, DriverDevices: []DriverDevice{drv}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckFail, checkMemlock: api.CheckPass},
			msgHas: "lacks /dev/infiniband/uverbs0, the uverbs node of mlx5_0 that claim ml/nic-claim holds", fixHas: "the dra.net driver injects it, not raild"},
		{name: "another device's node", has: []Device{{Path: uverbs.Path, Major: 231, Minor: 193}},
			ctr:    Container{Name: "app", Pid: 100, DriverDevices: []DriverDevice{drv}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckFail, checkMemlock: api.CheckPass}, fixHas: "dra.net"},
		{name: "node unknown to the topology", has: nil,
			ctr:    Container{Name: "app", Pid: 100, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckSkip, checkMemlock: api.CheckPass}, msgHas: "no device node to look for"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := newFakeProc(t)
			proc.process(100, limitsFile("unlimited", "unlimited"), nil, tt.has...)
			tt.ctr.Start = proc.start(100)
			got := checker(t, machine(t, "lab-1x1"), proc.root).container(tt.ctr)
			seen := map[string]int{}
			for _, c := range got {
				seen[c.Name]++
				if c.Status != tt.status[c.Name] {
					t.Fatalf("check %+v; want %s", c, tt.status[c.Name])
				}
				if c.Status == api.CheckFail && (c.Reason != ReasonDevicesMissing || !strings.Contains(c.Fix, tt.fixHas)) {
					t.Fatalf("failure %+v; want %s with a fix naming %q", c, ReasonDevicesMissing, tt.fixHas)
				}
			}
			if len(seen) != len(tt.status) || seen[checkDevices] != 1 {
				t.Fatalf("got %+v; want one of each of %v", got, tt.status)
			}
			if !strings.Contains(joinMessages(got), tt.msgHas) {
				t.Fatalf("messages %q lack %q", joinMessages(got), tt.msgHas)
			}
		})
	}
}
