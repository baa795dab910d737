package verbs

import (
	"errors"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
)

func TestParseAndAddTo(t *testing.T) {
	tests := []struct {
		name    string
		iface   api.PlanInterface
		index   *int
		wantIPs string // "address gw@interface", joined by ";"
		wantRts string // "dst gw", joined by ";"
		wantErr string // in the CNI error's message and details
	}{
		{name: "ipv4 and ipv6 with gateways and routes", index: current.Int(2),
			iface: api.PlanInterface{Name: "rail0",
				Addresses: []api.Address{{CIDR: "10.77.0.5/24", Gateway: "10.77.0.1"}, {CIDR: "fd00:77::5/64"}},
				Routes:    []api.Route{{Dst: "10.78.0.0/16", GW: "10.77.0.1"}, {Dst: "fd00:99::/64"}}},
			wantIPs: "10.77.0.5/24 10.77.0.1@2;fd00:77::5/64 <nil>@2", wantRts: "10.78.0.0/16 10.77.0.1;fd00:99::/64 <nil>"},
		{name: "ipam result: no interface index", iface: api.PlanInterface{Name: "net1", Addresses: []api.Address{{CIDR: "10.77.0.6/24"}}},
			wantIPs: "10.77.0.6/24 <nil>@-"},
		{name: "bad address", iface: api.PlanInterface{Name: "rail0", Addresses: []api.Address{{CIDR: "10.77.0.300/24"}}},
			wantErr: "bad address: rail0"},
		{name: "address without prefix", iface: api.PlanInterface{Name: "rail0", Addresses: []api.Address{{CIDR: "10.77.0.5"}}},
			wantErr: "bad address: rail0"},
		{name: "bad gateway", iface: api.PlanInterface{Name: "rail1", Addresses: []api.Address{{CIDR: "10.77.0.5/24", Gateway: "gw"}}},
			wantErr: "bad gateway: rail1"},
		{name: "zoned gateway", iface: api.PlanInterface{Name: "rail1", Addresses: []api.Address{{CIDR: "fd00::5/64", Gateway: "fe80::1%eth0"}}},
			wantErr: "has a zone"},
		{name: "bad route destination", iface: api.PlanInterface{Name: "rail0", Routes: []api.Route{{Dst: "10.78.0.0"}}},
			wantErr: "bad route: rail0: dst"},
		{name: "bad route gateway", iface: api.PlanInterface{Name: "rail0", Routes: []api.Route{{Dst: "10.78.0.0/16", GW: "10.77.0"}}},
			wantErr: "bad route: rail0: gw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Parse(tt.iface)
			if tt.wantErr != "" {
				var cniErr *types.Error
				if !errors.As(err, &cniErr) || cniErr.Code != types.ErrInternal ||
					!strings.Contains(cniErr.Msg+": "+cniErr.Details, tt.wantErr) {
					t.Fatalf("Parse = %v, want CNI code %d containing %q", err, types.ErrInternal, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			result := &current.Result{}
			a.AddTo(result, tt.index)
			var ips, routes []string
			for _, ip := range result.IPs {
				at := "-"
				if ip.Interface != nil {
					at = string(rune('0' + *ip.Interface))
				}
				ips = append(ips, ip.Address.String()+" "+ip.Gateway.String()+"@"+at)
			}
			for _, r := range result.Routes {
				routes = append(routes, r.Dst.String()+" "+r.GW.String())
			}
			if got := strings.Join(ips, ";"); got != tt.wantIPs {
				t.Errorf("ips = %q, want %q", got, tt.wantIPs)
			}
			if got := strings.Join(routes, ";"); got != tt.wantRts {
				t.Errorf("routes = %q, want %q", got, tt.wantRts)
			}
			if got := len(a.Prefixes()); got != len(tt.iface.Addresses) {
				t.Errorf("%d prefixes, want %d", got, len(tt.iface.Addresses))
			}
		})
	}
}

func TestWithRollback(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		rollback error
		wantCode uint // 0: not a CNI error
		want     string
	}{
		{"no rollback error: as is", types.NewError(types.ErrInternal, "attach rail0", "device busy"), nil, types.ErrInternal, "attach rail0; device busy"},
		{"CNI error keeps its code", types.NewError(api.CodeNoNIC, "no NIC", "pod p"), errors.New("release: store"), api.CodeNoNIC,
			"no NIC; pod p; rollback: release: store"},
		{"CNI error without details", types.NewError(types.ErrInternal, "attach", ""), errors.New("detach rail0: busy"), types.ErrInternal,
			"attach; rollback: detach rail0: busy"},
		{"plain error: joined", errors.New("boom"), errors.New("release: store"), 0, "boom\nrollback: release: store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WithRollback(tt.err, tt.rollback)
			var cniErr *types.Error
			isCNI := errors.As(got, &cniErr)
			if isCNI != (tt.wantCode != 0) || (isCNI && cniErr.Code != tt.wantCode) {
				t.Fatalf("WithRollback = %#v, want code %d", got, tt.wantCode)
			}
			if got.Error() != tt.want {
				t.Errorf("WithRollback = %q, want %q", got.Error(), tt.want)
			}
		})
	}
}
