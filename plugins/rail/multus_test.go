package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
)

// multusConf is a rail NAD's config as Multus v4.2.2 passes it to rail
// (not chained: no prevResult), with the keys it injects in extra.
func multusConf(user, extra map[string]any) []byte {
	conf := map[string]any{"cniVersion": "1.0.0", "name": "rail-macvlan", "type": "rail", "mode": "macvlan"}
	for _, m := range []map[string]any{user, extra} {
		for k, v := range m {
			conf[k] = v
		}
	}
	data, _ := json.Marshal(conf)
	return data
}

// net1Plan is raild's plan for a NAD attachment named net1.
func net1Plan() *api.Plan {
	return &api.Plan{Sandbox: "c1", CNIIfName: "net1", Network: "rail-macvlan", Mode: api.ModeMacvlan, Netns: "/ns/pod",
		Interfaces: []api.PlanInterface{{Name: "net1", Pool: "decode", NIC: &api.NIC{RDMADevice: "mlx5_1", Netdev: "ens1"},
			Addresses: []api.Address{{CIDR: "10.77.0.9/24"}}}}}
}

func TestAddUnderMultus(t *testing.T) {
	device := map[string]any{"deviceID": "0000:19:00.2", "pciBusID": "0000:19:00.2"}
	cniArgs := map[string]any{"args": map[string]any{"cni": map[string]any{"pool": "decode"}}}
	tests := []struct {
		name      string
		conf      []byte
		wantCode  uint
		wantText  string   // in the error
		wantNICs  []string // the selector's nics raild was asked with
		wantDev   string   // and its device
		wantAsked bool
	}{
		{name: "cni-args and a PCI device: that NIC, the pod's pool", conf: multusConf(nil, merge(device, cniArgs)),
			wantDev: "0000:19:00.2", wantAsked: true},
		{name: "a share of rail's own device plugin: the placement chooses", conf: multusConf(map[string]any{"nics": []string{"mlx5_1"}},
			map[string]any{"deviceID": "rdma-4", "pciBusID": "rdma-4"}), wantNICs: []string{"mlx5_1"}, wantAsked: true},
		{name: "runtimeConfig capabilities", conf: multusConf(map[string]any{"capabilities": map[string]bool{"deviceID": true, "CNIDeviceInfoFile": true}},
			map[string]any{"runtimeConfig": map[string]any{"deviceID": "0000:19:00.3", "CNIDeviceInfoFile": "/var/run/k8s.cni.cncf.io/devinfo/cni/x"}}),
			wantDev: "0000:19:00.3", wantAsked: true},
		{name: "a user's unknown key still refused", conf: multusConf(map[string]any{"macvlanmode": "private"}, device),
			wantCode: types.ErrUnsupportedField, wantText: "macvlanmode"},
		{name: "device beside the NAD's nics", conf: multusConf(map[string]any{"nics": []string{"mlx5_0"}}, device),
			wantCode: types.ErrInvalidNetworkConfig, wantText: "resourceName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := &fakeLinks{}
			raild := fakeRaild{plan: net1Plan()}
			p, out, _ := testPlugin(&raild, links)
			err := p.add(&skel.CmdArgs{ContainerID: "c1", Netns: "/ns/pod", IfName: "net1", StdinData: tt.conf,
				Args: "IgnoreUnknown=true;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=c1;K8S_POD_UID=u"})
			if codeOf(err) != tt.wantCode || (err != nil) != (tt.wantCode != 0) || (err != nil && !strings.Contains(err.Error(), tt.wantText)) {
				t.Fatalf("add = %v, want code %d mentioning %q", err, tt.wantCode, tt.wantText)
			}
			if (len(raild.asked) == 1) != tt.wantAsked {
				t.Fatalf("raild asked %d times", len(raild.asked))
			}
			if !tt.wantAsked {
				return
			}
			req := raild.asked[0]
			if !slices.Equal(req.Selector.NICs, tt.wantNICs) || req.Selector.Device != tt.wantDev || req.CNIIfName != "net1" || req.Chained || req.PodName != "p" {
				t.Errorf("asked raild %+v; want selector nics %v, device %q for net1, not chained, pod p", req, tt.wantNICs, tt.wantDev)
			}
			if !strings.Contains(out.String(), `"name": "net1"`) || !strings.Contains(out.String(), "10.77.0.9/24") {
				t.Errorf("result %s: want net1 with 10.77.0.9/24", out)
			}
		})
	}
}
