package attach

import (
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/vfnetdev"
	"github.com/railcni/rail/pkg/vfpf"
)

func TestVFAliasRoundTrip(t *testing.T) {
	on, off, state := true, false, VFLinkDisable
	full := aliasRecord{Host: "ens1f0v2", Name: "rail0", MTU: 1500, Up: true, RDMA: "mlx5_12", Table: 101,
		Owner: Owner{Sandbox: strings.Repeat("a", 64), CNIIfName: "eth0"},
		VF: &vfRecord{PF: "ens1f0", Index: 2, MACs: vfnetdev.MACs{MAC: net.HardwareAddr{0, 0, 0, 0, 0, 0},
			HostMAC: net.HardwareAddr{0x52, 0x35, 0xf7, 0x89, 0x82, 0x98}}, Settings: vfpf.Settings{VLAN: &vfpf.VLAN{VLAN: 0, QoS: 0, Proto: VLANProto8021Q},
			Spoofchk: &on, Trust: &off, LinkState: &state, Rate: &vfpf.Rate{Min: 0, Max: 4294967295}}}}
	tests := []struct {
		name string
		rec  aliasRecord
	}{
		{"every setting changed", full},
		{"nothing changed", aliasRecord{Host: "eth3", Name: "net1", MTU: 9000, VF: &vfRecord{PF: "pf1", Index: 6}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.rec.String()
			if len(s) > maxAliasLen {
				t.Fatalf("alias is %d bytes, the kernel keeps %d: %s", len(s), maxAliasLen, s)
			}
			got, ok := parseAlias(s)
			if !ok || !reflect.DeepEqual(got, tt.rec) {
				t.Fatalf("parseAlias(%q) = %+v, %v; want %+v", s, got, ok, tt.rec)
			}
			if r, _ := ReadAlias(s); r.Mode != ModeVF {
				t.Errorf("ReadAlias mode %q, want vf", r.Mode)
			}
		})
	}
	for _, bad := range []string{
		"rail:eth3:name=net1:mtu=1500:up=1:vf=2",                  // no pf
		"rail:eth3:name=net1:mtu=1500:up=1:pf=pf0",                // no index
		"rail:eth3:name=net1:mtu=1500:up=1:pf=pf0:vf=2:vm=zz",     // bad MAC
		"rail:eth3:name=net1:mtu=1500:up=1:pf=pf0:vf=2:vl=100.3",  // vlan without proto
		"rail:eth3:name=net1:mtu=1500:up=1:pf=pf0:vf=2:sc=2",      // spoofchk not a bit
		"rail:eth3:name=net1:kind=macvlan:pf=pf0:vf=2",            // a child is no VF
		"rail:eth3:name=net1:mtu=1500:up=1:pf=pf0:vf=2:rt=10",     // rate without max
		"rail:eth3:name=net1:mtu=1500:up=1:pf=a/b:vf=2",           // PF no interface name
		"rail:eth3:name=net1:mtu=1500:up=1:pf=pf0:vf=2:ls=x:tr=1", // link state not a number
	} {
		if rec, ok := parseAlias(bad); ok {
			t.Errorf("parseAlias(%q) = %+v, want refused", bad, rec)
		}
	}
}

func TestVFSpecValidation(t *testing.T) {
	base := func(c VFConfig) Spec {
		return Spec{Mode: ModeVF, Parent: "eth3", Name: "rail0", VF: &VF{PF: "pf0", Index: 2, Config: c}}
	}
	withGUID := func(guid string) Spec {
		s := base(VFConfig{})
		s.VF.GUID = mustMAC(guid)
		return s
	}
	tests := []struct {
		name    string
		spec    Spec
		wantErr string
	}{
		{"every setting", base(allVF()), ""},
		{"vf mode without VF", Spec{Mode: ModeVF, Parent: "eth3", Name: "rail0"}, "needs VF"},
		{"VF in move mode", Spec{Mode: ModeMove, Parent: "eth3", Name: "rail0", VF: &VF{PF: "pf0"}}, `VF is only for mode "vf"`},
		{"bad PF name", Spec{Mode: ModeVF, Parent: "eth3", Name: "rail0", VF: &VF{PF: "a:b"}}, "field VF.PF"},
		{"vlan 4095", base(VFConfig{VLAN: ptr(4095)}), "vlan 4095 is out of range: use 0 (none) to 4094"},
		{"negative vlan", base(VFConfig{VLAN: ptr(-1)}), "vlan -1 is out of range"},
		{"qos 8", base(VFConfig{VLAN: ptr(10), QoS: 8}), "vlanQoS 8 is out of range: use 0-7"},
		{"qos without vlan", base(VFConfig{QoS: 3}), "vlanQoS 3 needs a vlan"},
		{"802.1ad without vlan", base(VFConfig{VLANProto: VLANProto8021AD}), "vlanProto 802.1ad needs a vlan"},
		{"unknown proto", base(VFConfig{VLAN: ptr(5), VLANProto: 0x9100}), "vlanProto 0x9100 is unknown"},
		{"multicast MAC", base(VFConfig{MAC: mustMAC("01:00:5e:00:00:01")}), "mac \"01:00:5e:00:00:01\" is not a unicast Ethernet MAC"},
		{"zero MAC", base(VFConfig{MAC: mustMAC("00:00:00:00:00:00")}), "not a unicast Ethernet MAC"},
		{"IB-length MAC", base(VFConfig{MAC: mustMAC("00:00:00:00:00:00:00:01")}), "not a unicast Ethernet MAC"},
		{"min above max", base(VFConfig{MinTxRate: ptr(uint32(200)), MaxTxRate: ptr(uint32(100))}), "min_tx_rate 200 is above max_tx_rate 100"},
		{"min with unlimited max", base(VFConfig{MinTxRate: ptr(uint32(200)), MaxTxRate: ptr(uint32(0))}), ""},
		{"link state 3", base(VFConfig{LinkState: ptr(VFLinkState(3))}), "link_state 3 is unknown"},
		{"GUID", withGUID("00:11:22:33:44:55:66:77"), ""},
		{"all-ones GUID", withGUID("ff:ff:ff:ff:ff:ff:ff:ff"), "field VF.GUID: infinibandGUID \"ff:ff:ff:ff:ff:ff:ff:ff\" is not a usable GUID"},
		{"zero GUID", withGUID("00:00:00:00:00:00:00:00"), "not all zero"},
		{"six-byte GUID", withGUID("00:11:22:33:44:55"), "use eight bytes like 00:11:22:33:44:55:66:77"},
		{"no netdev yet valid (refused at attach with why)", Spec{Mode: ModeVF, Name: "rail0", VF: &VF{PF: "pf0"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := validate(tt.spec); !errorMatches(err, tt.wantErr) {
				t.Fatalf("validate = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
