package attach

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/rdma"
)

func TestValidate(t *testing.T) {
	good := Spec{Mode: ModeMove, Parent: "ens1f0np0", Name: "rail0", Addresses: prefixes("10.10.0.5/24"),
		Routes: []Route{route("10.20.0.0/16", "10.10.0.1")}}
	tests := []struct {
		name    string
		change  func(s *Spec)
		wantErr string // "" = valid
	}{
		{"good move", func(*Spec) {}, ""},
		{"good macvlan", func(s *Spec) { s.Mode, s.MacvlanMode, s.MAC = ModeMacvlan, "passthru", "02:00:00:00:00:01" }, ""},
		{"good ipoib", func(s *Spec) { s.Mode, s.PKey, s.IPoIBMode = ModeIPoIB, 0x8001, "connected" }, ""},
		{"explicit default route", func(s *Spec) { s.Routes = []Route{route("0.0.0.0/0", "10.10.0.1")} }, ""},
		{"unknown mode", func(s *Spec) { s.Mode = "sriov" }, `Mode "sriov" is unknown`},
		{"empty parent", func(s *Spec) { s.Parent = "" }, "Parent: interface name is empty"},
		{"long name", func(s *Spec) { s.Name = "rail0123456789abc" }, "Name: interface name"},
		{"colon in name", func(s *Spec) { s.Name = "rail:0" }, `Name: interface name "rail:0" contains ':'`},
		{"slash in parent", func(s *Spec) { s.Parent = "a/b" }, "Parent: interface name"},
		{"zero address", func(s *Spec) { s.Addresses = []netip.Prefix{{}} }, "Addresses[0] is not a valid prefix"},
		{"unspecified address", func(s *Spec) { s.Addresses = prefixes("0.0.0.0/24") }, "Addresses[0] 0.0.0.0/24 is not a host address"},
		{"mapped address", func(s *Spec) { s.Addresses = prefixes("::ffff:10.0.0.1/120") }, "IPv4-mapped"},
		{"route host bits", func(s *Spec) { s.Routes = []Route{route("10.20.0.1/16", "")} }, "Routes[0].Dst 10.20.0.1/16 has host bits set: use 10.20.0.0/16"},
		{"route family mismatch", func(s *Spec) { s.Routes = []Route{route("10.20.0.0/16", "fd00::1")} }, "Routes[0].GW fd00::1 does not fit"},
		{"mtu too small", func(s *Spec) { s.MTU = 60 }, "MTU 60 is out of range"},
		{"mtu too small for ipv6", func(s *Spec) { s.MTU, s.Addresses = 1000, prefixes("fd00::5/64") }, "below 1280"},
		{"main table", func(s *Spec) { s.Table = 254 }, "Table 254 is a reserved kernel table"},
		{"negative table", func(s *Spec) { s.Table = -1 }, "Table -1 is out of range"},
		{"bad macvlan mode", func(s *Spec) { s.Mode, s.MacvlanMode = ModeMacvlan, "source" }, `MacvlanMode "source" is unknown`},
		{"bad mac", func(s *Spec) { s.Mode, s.MAC = ModeMacvlan, "zz:00" }, `MAC "zz:00" is not a MAC address`},
		{"mac in move mode", func(s *Spec) { s.MAC = "02:00:00:00:00:01" }, `MAC is only supported in mode "macvlan"`},
		{"bad ipoib mode", func(s *Spec) { s.Mode, s.IPoIBMode = ModeIPoIB, "fast" }, `IPoIBMode "fast" is unknown`},
		{"pkey without partition", func(s *Spec) { s.Mode, s.PKey = ModeIPoIB, 0x8000 }, "PKey 0x8000 has no partition number"},
		{"ipoib in exclusive rdma mode", func(s *Spec) { s.Mode, s.RDMADevice, s.RDMANetns = ModeIPoIB, "mlx5_0", rdma.NetnsExclusive }, "RDMADevice mlx5_0: attach mode \"ipoib\" needs"},
		{"move in exclusive rdma mode", func(s *Spec) { s.RDMADevice, s.RDMANetns = "mlx5_0", rdma.NetnsExclusive }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.change(&s)
			err := validate(s)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("validate = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidateDetachAllowsMissingParent(t *testing.T) {
	cached := Spec{Mode: ModeMove, Name: "rail0"}
	if err := validateDetach(cached); err != nil {
		t.Errorf("validateDetach(%+v) = %v, want nil", cached, err)
	}
	if err := validate(cached); err == nil || !strings.Contains(err.Error(), "Parent") {
		t.Errorf("validate(%+v) = %v, want Parent required", cached, err)
	}
	if err := validateDetach(Spec{Mode: ModeMove, Name: "rail0", Parent: "a:b"}); err == nil {
		t.Errorf("validateDetach accepted a bad Parent")
	}
}

// TestAttachRefusesBadSpecWithoutTouchingAnything: validation runs before
// any namespace is opened.
func TestAttachRefusesBadSpecWithoutTouchingAnything(t *testing.T) {
	e := newTestEnv(t)
	nic := e.addNIC(1500, true)
	hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
	bad := Spec{Mode: ModeMove, Parent: nic, Name: "rail0", MTU: 20}
	if _, err := e.attach(bad); err == nil || !strings.Contains(err.Error(), "MTU 20") {
		t.Fatalf("Attach = %v, want the MTU refused", err)
	}
	if err := e.detach(bad); err == nil || !strings.Contains(err.Error(), "MTU 20") {
		t.Fatalf("Detach = %v, want the MTU refused", err)
	}
	assertSame(t, "host netns", e.host, hostBefore)
	assertSame(t, "pod netns", e.pod, podBefore)
}
