package main

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netconf"
	"github.com/railcni/rail/pkg/rdma"
)

func TestSpecFor(t *testing.T) {
	conf, err := netconf.LoadRail([]byte(`{"name":"n","type":"rail","mode":"move","mtu":4000}`))
	if err != nil {
		t.Fatal(err)
	}
	iface := api.PlanInterface{Name: "rail1", Table: 101, MTU: 1500,
		NIC:       &api.NIC{RDMADevice: "mlx5_1", Netdev: "ibp26s0"},
		Addresses: []api.Address{{CIDR: "10.1.0.7/24"}},
		Routes:    []api.Route{{Dst: "10.2.0.0/16", GW: "10.1.0.1"}}}
	tests := []struct {
		name    string
		mutate  func(*api.PlanInterface)
		mode    rdma.NetnsMode
		check   func(attach.Spec) bool
		wantErr string
	}{
		{name: "fields carried", check: func(s attach.Spec) bool {
			return s.Parent == "ibp26s0" && s.RDMADevice == "mlx5_1" && s.MTU == 4000 && s.Table == 101 && s.ArpTuning &&
				s.Addresses[0].String() == "10.1.0.7/24" && s.Routes[0].GW.String() == "10.1.0.1" && s.RDMANetns != rdma.NetnsExclusive
		}},
		{name: "exclusive mode", mode: rdma.NetnsExclusive, check: func(s attach.Spec) bool { return s.RDMANetns == rdma.NetnsExclusive }},
		{name: "bad address", mutate: func(i *api.PlanInterface) { i.Addresses = []api.Address{{CIDR: "10.1.0.7"}} }, wantErr: "bad address"},
		{name: "bad route", mutate: func(i *api.PlanInterface) { i.Routes = []api.Route{{Dst: "x"}} }, wantErr: "bad route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := iface
			if tt.mutate != nil {
				tt.mutate(&in)
			}
			spec, _, err := specFor(conf, in, api.ModeMove, tt.mode)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(spec) {
				t.Fatalf("spec = %+v, %v", spec, err)
			}
		})
	}
}

func TestOwnName(t *testing.T) {
	conf := &netconf.Rail{IfPrefix: "rail"}
	tests := []struct {
		chained      bool
		ifname, name string
		want         bool
	}{
		{true, "eth0", "rail0", true}, {true, "eth0", "rail12", true}, {true, "eth0", "eth0", false},
		{true, "eth0", "railx", false}, {true, "eth0", "rail", false},
		{false, "net1", "net1", true}, {false, "net1", "net1-1", true}, {false, "net1", "net10", false},
	}
	for _, tt := range tests {
		if got := ownName(conf, tt.chained, tt.ifname, tt.name); got != tt.want {
			t.Errorf("ownName(chained=%v, %s, %s) = %v, want %v", tt.chained, tt.ifname, tt.name, got, tt.want)
		}
	}
}
