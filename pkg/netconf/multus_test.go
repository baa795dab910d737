package netconf

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
)

// nadConf is a rail NAD's config as Multus hands it to rail: the user's
// keys, then what Multus adds (extra).
func nadConf(extra string) string {
	conf := `{"cniVersion":"1.0.0","name":"rail-move","type":"rail","mode":"move","pool":"decode"`
	if extra != "" {
		conf += "," + extra
	}
	return conf + "}"
}

func TestLoadRailUnderMultus(t *testing.T) {
	tests := []struct {
		name      string
		conf      string
		wantCode  uint     // 0: accepted
		wantText  string   // in the error
		wantDev   string   // Device()
		wantNIC   string   // DeviceNIC()
		wantNICs  []string // Selector().NICs; Selector().Device is wantNIC
		wantCNIPo string   // cni-args pool
	}{
		{name: "SR-IOV VF: deviceID and pciBusID", conf: nadConf(`"deviceID":"0000:19:00.2","pciBusID":"0000:19:00.2"`),
			wantDev: "0000:19:00.2", wantNIC: "0000:19:00.2"},
		{name: "PCI in capitals is normalized", conf: nadConf(`"deviceID":"0000:3B:02.1","pciBusID":"0000:3b:02.1"`),
			wantDev: "0000:3B:02.1", wantNIC: "0000:3b:02.1"},
		{name: "cni-args beside the device", conf: nadConf(`"deviceID":"0000:19:00.2","pciBusID":"0000:19:00.2","args":{"cni":{"pool":"prefill"}}`),
			wantDev: "0000:19:00.2", wantNIC: "0000:19:00.2", wantCNIPo: "prefill"},
		{name: "rail's own device plugin share: no NIC", conf: nadConf(`"deviceID":"rdma-3","pciBusID":"rdma-3"`),
			wantDev: "rdma-3"},
		{name: "GPU UUID: no NIC, the netconf's nics stay", conf: `{"name":"n","type":"rail","nics":["mlx5_1"],"deviceID":"GPU-00000000-0000-0000-0000-000000000001","pciBusID":"GPU-00000000-0000-0000-0000-000000000001"}`,
			wantDev: "GPU-00000000-0000-0000-0000-000000000001", wantNICs: []string{"mlx5_1"}},
		{name: "runtimeConfig capabilities deviceID and CNIDeviceInfoFile",
			conf:    nadConf(`"capabilities":{"deviceID":true,"CNIDeviceInfoFile":true},"runtimeConfig":{"deviceID":"0000:19:00.3","CNIDeviceInfoFile":"/var/run/k8s.cni.cncf.io/devinfo/cni/x-net1"}`),
			wantDev: "0000:19:00.3", wantNIC: "0000:19:00.3"},
		{name: "the resource's device wins over runtimeConfig's", conf: nadConf(`"deviceID":"0000:19:00.2","pciBusID":"0000:19:00.2","runtimeConfig":{"deviceID":"0000:19:00.3"}`),
			wantDev: "0000:19:00.2", wantNIC: "0000:19:00.2"},
		{name: "no device: nothing changes", conf: nadConf(`"nics":["mlx5_0"]`), wantNICs: []string{"mlx5_0"}},
		{name: "device and nics both choose the NIC", conf: nadConf(`"nics":["mlx5_0"],"deviceID":"0000:19:00.2","pciBusID":"0000:19:00.2"`),
			wantCode: types.ErrInvalidNetworkConfig, wantText: `"nics"`},
		{name: "deviceID and pciBusID differ", conf: nadConf(`"deviceID":"0000:19:00.2","pciBusID":"0000:19:00.4"`),
			wantCode: types.ErrInvalidNetworkConfig, wantText: `"pciBusID"`},
		{name: "unknown user key beside Multus' keys", conf: nadConf(`"master":"eth1","deviceID":"0000:19:00.2","pciBusID":"0000:19:00.2"`),
			wantCode: types.ErrUnsupportedField, wantText: `"master"`},
		{name: "a capability rail does not take", conf: nadConf(`"runtimeConfig":{"ips":["10.1.1.1/24"]}`),
			wantCode: types.ErrUnsupportedField, wantText: `runtimeConfig.ips`},
		{name: "deviceID in another case", conf: nadConf(`"DeviceID":"0000:19:00.2"`),
			wantCode: types.ErrUnsupportedField, wantText: `write "deviceID"`},
		{name: "deviceID not a string", conf: nadConf(`"deviceID":7`), wantCode: types.ErrDecodingFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := LoadRail([]byte(tt.conf))
			if !wantError(t, err, tt.wantCode, tt.wantText) {
				return
			}
			sel := conf.Selector()
			if conf.Device() != tt.wantDev || conf.DeviceNIC() != tt.wantNIC || sel.Device != tt.wantNIC || !slices.Equal(sel.NICs, tt.wantNICs) {
				t.Errorf("device %q, NIC %q, selector %+v; want %q, %q, nics %v",
					conf.Device(), conf.DeviceNIC(), sel, tt.wantDev, tt.wantNIC, tt.wantNICs)
			}
			if tt.wantCNIPo != "" && (conf.CNIArgs() == nil || conf.CNIArgs().Pool != tt.wantCNIPo) {
				t.Errorf("cni-args %+v, want pool %s", conf.CNIArgs(), tt.wantCNIPo)
			}
		})
	}
}

// rail-ipam under an upstream main plugin: Multus' keys sit in the main
// plugin's part, which rail-ipam leaves to the main plugin; its own ipam
// section stays strict.
func TestLoadIPAMUnderMultus(t *testing.T) {
	main := `"cniVersion":"1.0.0","name":"macvlan-rail-ipam","type":"macvlan","master":"eth1","mode":"bridge",` +
		`"deviceID":"0000:19:00.2","pciBusID":"0000:19:00.2","args":{"cni":{"pool":"decode"}},` +
		`"runtimeConfig":{"deviceID":"0000:19:00.2","mac":"02:00:00:00:00:01"}`
	tests := []struct {
		name     string
		ipam     string
		wantCode uint
		wantText string
	}{
		{name: "accepted", ipam: `{"type":"rail-ipam","pool":"rail"}`},
		{name: "Multus key inside ipam is not ipam's", ipam: `{"type":"rail-ipam","deviceID":"0000:19:00.2"}`,
			wantCode: types.ErrUnsupportedField, wantText: "deviceID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := LoadIPAM([]byte("{" + main + `,"ipam":` + tt.ipam + "}"))
			if !wantError(t, err, tt.wantCode, tt.wantText) {
				return
			}
			if conf.CNIArgs() == nil || conf.CNIArgs().Pool != "decode" {
				t.Errorf("cni-args %+v, want pool decode", conf.CNIArgs())
			}
		})
	}
}

// wantError fails t unless err is the CNI error wanted (code 0: none) and
// reports whether the load succeeded, so the caller checks the result.
func wantError(t *testing.T, err error, code uint, text string) bool {
	t.Helper()
	if code == 0 {
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		return true
	}
	var cniErr *types.Error
	if !errors.As(err, &cniErr) || cniErr.Code != code || !strings.Contains(cniErr.Error(), text) {
		t.Fatalf("got %s; want code %d mentioning %s", excerpt(err), code, text)
	}
	return false
}
