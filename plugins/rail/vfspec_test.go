package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

func vfPlanInterface(name string) api.PlanInterface {
	return api.PlanInterface{Name: name, Addresses: []api.Address{{CIDR: "10.1.0.7/24"}},
		NIC: &api.NIC{PCI: "0000:01:10.2", Netdev: "eth1", RDMADevice: "mlx5_12"},
		VF: &api.VF{PCI: "0000:01:10.2", Index: 1, PFPCI: "0000:01:00.0", PF: "pf0", Netdev: "eth1", Driver: "mlx5_core",
			RDMADevice: "mlx5_12", MAC: api.LeaseMAC("sb", name).String()}}
}

func TestVFSpecFor(t *testing.T) {
	tests := []struct {
		name    string
		conf    string
		ifaces  int
		ib      bool // the VF's PF is InfiniBand
		mutate  func(*api.VF)
		check   func(attach.Spec) bool
		wantErr string
	}{
		{name: "plan's VF, lease MAC, netconf settings", conf: `"vlan":100,"vlanQoS":2,"spoofchk":"off","trust":"on","max_tx_rate":500`,
			check: func(s attach.Spec) bool {
				c := s.VF.Config
				return s.Mode == api.ModeVF && s.Parent == "eth1" && s.RDMADevice == "mlx5_12" && s.VF.PF == "pf0" && s.VF.Index == 1 &&
					c.MAC.String() == api.LeaseMAC("sb", "rail0").String() && *c.VLAN == 100 && c.QoS == 2 && !*c.Spoofchk &&
					*c.Trust && *c.MaxTxRate == 500 && c.MinTxRate == nil && c.LinkState == nil
			}},
		{name: "netconf mac over the lease's", conf: `"mac":"02:00:00:00:00:a0"`,
			check: func(s attach.Spec) bool { return s.VF.Config.MAC.String() == "02:00:00:00:00:a0" }},
		{name: "one mac for two VFs", conf: `"mac":"02:00:00:00:00:a0"`, ifaces: 2, wantErr: "no two VFs may share a MAC"},
		{name: "two VFs, each its lease's MAC", ifaces: 2, check: func(s attach.Spec) bool {
			return s.VF.Config.MAC.String() == api.LeaseMAC("sb", s.Name).String()
		}},
		{name: "pool's settings where the netconf gives none", mutate: withPool(`{"vlan":200,"vlanQoS":5,"trust":true,"maxTxRate":900}`),
			check: func(s attach.Spec) bool {
				c := s.VF.Config
				return *c.VLAN == 200 && c.QoS == 5 && *c.Trust && *c.MaxTxRate == 900 && c.Spoofchk == nil &&
					c.MAC.String() == api.LeaseMAC("sb", "rail0").String()
			}},
		{name: "netconf keys over the pool's, key by key", conf: `"vlan":100,"spoofchk":"off"`,
			mutate: withPool(`{"vlan":200,"vlanQoS":5,"vlanProto":34984,"spoofchk":true,"trust":true}`),
			check: func(s attach.Spec) bool {
				c := s.VF.Config
				return *c.VLAN == 100 && c.QoS == 0 && c.VLANProto == 0 && !*c.Spoofchk && *c.Trust
			}},
		{name: "netconf min above the pool's max", conf: `"min_tx_rate":500`, mutate: withPool(`{"maxTxRate":100}`),
			wantErr: `invalid netconf field "min_tx_rate"`},
		{name: "PF inside a pod", mutate: func(v *api.VF) { v.PF = "" }, wantErr: "its PF 0000:01:00.0 has no netdev in the host netns"},
		{name: "vfio-bound VF", mutate: func(v *api.VF) { v.Driver, v.Netdev = "vfio-pci", "" }, wantErr: "bound to vfio-pci"},
		{name: "IB VF: the lease's GUID, no MAC", ib: true, check: func(s attach.Spec) bool {
			return s.VF.GUID.String() == api.LeaseGUID("sb", s.Name).String() && s.VF.Config.MAC == nil && s.VF.PF == "pf0" && s.VF.Index == 1
		}},
		{name: "IB VF: the runtime's GUID over the lease's", ib: true, conf: `"runtimeConfig":{"infinibandGUID":"00:11:22:33:44:55:66:77"}`,
			check: func(s attach.Spec) bool { return s.VF.GUID.String() == "00:11:22:33:44:55:66:77" }},
		{name: "IB VF: link_state applies", ib: true, conf: `"link_state":"enable"`,
			check: func(s attach.Spec) bool { return *s.VF.Config.LinkState == api.VFLinkEnable }},
		{name: "IB VF: vlan refused", ib: true, conf: `"vlan":100`, wantErr: `invalid netconf field "vlan"; VF 0000:01:10.2 of PF pf0 is InfiniBand`},
		{name: "IB VF: mac refused", ib: true, conf: `"runtimeConfig":{"mac":"02:00:00:00:00:a0"}`, wantErr: `invalid netconf field "mac"`},
		{name: "IB VF: trust refused", ib: true, conf: `"trust":"on"`, wantErr: `invalid netconf field "trust"`},
		{name: "IB VF: one GUID for two VFs", ib: true, ifaces: 2, conf: `"runtimeConfig":{"infinibandGUID":"00:11:22:33:44:55:66:77"}`,
			wantErr: "no two VFs may share a GUID"},
		{name: "IB VF: plan without a GUID (older raild)", ib: true, mutate: func(v *api.VF) { v.GUID = "" }, wantErr: "no GUID"},
		{name: "GUID for a RoCE VF", conf: `"runtimeConfig":{"infinibandGUID":"00:11:22:33:44:55:66:77"}`,
			wantErr: `invalid netconf field "infinibandGUID"; VF 0000:01:10.2 of PF pf0 is Ethernet (RoCE)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := netconf.LoadRail([]byte(`{"name":"n","type":"rail","mode":"vf"` + prefixComma(tt.conf) + `}`))
			if err != nil {
				t.Fatal(err)
			}
			plan := &api.Plan{Mode: api.ModeVF}
			for i := range max(tt.ifaces, 1) {
				iface := vfPlanInterface("rail" + string(rune('0'+i)))
				iface.NIC.LinkLayer = topology.Ethernet
				if tt.ib {
					iface.NIC.LinkLayer, iface.VF.GUID = topology.InfiniBand, api.LeaseGUID("sb", iface.Name).String()
				}
				if tt.mutate != nil {
					tt.mutate(iface.VF)
				}
				plan.Interfaces = append(plan.Interfaces, iface)
			}
			got, err := plannedInterfaces(&skel.CmdArgs{ContainerID: "sb", IfName: "eth0"}, conf, plan, rdma.NetnsShared)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range got {
				if !tt.check(p.spec) {
					t.Fatalf("spec = %+v, VF %+v", p.spec, p.spec.VF)
				}
			}
		})
	}
}

// withPool gives the planned VF its pool's settings, as raild sends them.
func withPool(settings string) func(*api.VF) {
	return func(v *api.VF) {
		v.PoolConfig = &api.VFConfig{}
		if err := json.Unmarshal([]byte(settings), v.PoolConfig); err != nil {
			panic(err)
		}
	}
}

func prefixComma(s string) string {
	if s == "" {
		return ""
	}
	return "," + s
}

func TestVFDetachSpec(t *testing.T) {
	iface := vfPlanInterface("rail0")
	iface.VF.Netdev = "" // in the pod
	s := detachSpecFor(iface, api.ModeVF)
	if s.Mode != api.ModeVF || s.Name != "rail0" || s.VF == nil || s.VF.PF != "pf0" || s.VF.Index != 1 || s.VF.Config.MAC != nil {
		t.Fatalf("detach spec %+v VF %+v: want the VF by PF and index, nothing to set", s, s.VF)
	}
	iface.VF.PF = ""
	if s := detachSpecFor(iface, api.ModeVF); s.Mode != "" || s.VF != nil || s.Name != "rail0" {
		t.Fatalf("detach spec %+v: want the mode left to the alias when the PF is unknown", s)
	}
}
