package netconf

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

func TestLoadRail(t *testing.T) {
	tests := []struct {
		name     string
		conf     string
		wantCode uint   // 0: no error
		wantText string // in the error
		check    func(*testing.T, *Rail)
	}{
		{name: "defaults", conf: `{"cniVersion":"1.1.0","name":"n","type":"rail"}`, check: func(t *testing.T, c *Rail) {
			if c.Mode != "move" || c.Socket != "/run/rail/raild.sock" || c.IfPrefix != "rail" || c.MacvlanMode != "bridge" {
				t.Errorf("defaults not applied: %+v", c)
			}
		}},
		{name: "full", conf: `{"cniVersion":"1.0.0","name":"n","type":"rail","mode":"macvlan","pool":"prefill","nics":["mlx5_0"],
			"rail":1,"linkLayer":"Ethernet","mtu":4200,"macvlanMode":"private","timeout":"3s",
			"runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"rail.dev/pool":"decode"}},
			"args":{"cni":{"gpus":[0,1],"pool":"x","rail":"2"}}}`, check: func(t *testing.T, c *Rail) {
			if c.Annotations()["rail.dev/pool"] != "decode" || c.CNIArgs().GPUs.String() != "0,1" || int(*c.CNIArgs().Rail) != 2 {
				t.Errorf("runtime config or args lost: %+v %+v", c.RuntimeConfig, c.Args.CNI)
			}
			if c.CallTimeout.Seconds() != 3 {
				t.Errorf("timeout = %v", c.CallTimeout)
			}
		}},
		{name: "pkey", conf: `{"name":"n","type":"rail","mode":"ipoib","pkey":"0x8001"}`, check: func(t *testing.T, c *Rail) {
			if c.PKeyValue != 0x8001 {
				t.Errorf("pkey = %#x", c.PKeyValue)
			}
		}},
		{name: "unknown field", conf: `{"name":"n","type":"rail","mdoe":"move"}`, wantCode: types.ErrUnsupportedField, wantText: "mdoe"},
		{name: "bad mode", conf: `{"name":"n","type":"rail","mode":"sriov"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"mode"`},
		{name: "vf keys as sriov-cni names them", conf: `{"name":"n","type":"rail","mode":"vf","vlan":100,"vlanQoS":3,"vlanProto":"802.1ad",
			"mac":"02:00:00:00:00:a0","spoofchk":"off","trust":"on","link_state":"enable","min_tx_rate":10,"max_tx_rate":100}`,
			check: func(t *testing.T, c *Rail) {
				v := c.VFConfig()
				if *v.VLAN != 100 || v.QoS != 3 || v.VLANProto != 0x88a8 || v.MAC.String() != "02:00:00:00:00:a0" || *v.Spoofchk ||
					!*v.Trust || *v.LinkState != api.VFLinkEnable || *v.MinTxRate != 10 || *v.MaxTxRate != 100 {
					t.Errorf("VFConfig = %+v", v)
				}
			}},
		{name: "vf mode alone leaves the VF's settings", conf: `{"name":"n","type":"rail","mode":"vf"}`, check: func(t *testing.T, c *Rail) {
			if v := c.VFConfig(); !reflect.DeepEqual(v, api.VFConfig{}) {
				t.Errorf("VFConfig = %+v, want nothing asked", v)
			}
		}},
		{name: "runtimeConfig mac over the netconf's", conf: `{"name":"n","type":"rail","mode":"vf","mac":"02:00:00:00:00:a0",
			"runtimeConfig":{"mac":"02:00:00:00:00:b0"}}`, check: func(t *testing.T, c *Rail) {
			if c.VFConfig().MAC.String() != "02:00:00:00:00:b0" {
				t.Errorf("mac = %s, want runtimeConfig's", c.VFConfig().MAC)
			}
		}},
		{name: "vf key in move mode", conf: `{"name":"n","type":"rail","vlan":5}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"vlan"`},
		{name: "vlan 4095", conf: `{"name":"n","type":"rail","mode":"vf","vlan":4095}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `vlan 4095 is out of range`},
		{name: "qos 8", conf: `{"name":"n","type":"rail","mode":"vf","vlan":5,"vlanQoS":8}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"vlanQoS"`},
		{name: "qos without vlan", conf: `{"name":"n","type":"rail","mode":"vf","vlanQoS":2}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `needs a vlan`},
		{name: "bad vlanProto", conf: `{"name":"n","type":"rail","mode":"vf","vlan":5,"vlanProto":"qinq"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"vlanProto"`},
		{name: "malformed mac", conf: `{"name":"n","type":"rail","mode":"vf","mac":"02:00:00:00:00"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"mac"`},
		{name: "multicast mac", conf: `{"name":"n","type":"rail","mode":"vf","runtimeConfig":{"mac":"01:00:5e:00:00:01"}}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `not a unicast Ethernet MAC`},
		{name: "spoofchk yes", conf: `{"name":"n","type":"rail","mode":"vf","spoofchk":"yes"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `use on or off`},
		{name: "link_state up", conf: `{"name":"n","type":"rail","mode":"vf","link_state":"up"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"link_state"`},
		{name: "negative rate", conf: `{"name":"n","type":"rail","mode":"vf","max_tx_rate":-1}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"max_tx_rate"`},
		{name: "infinibandGUID capability", conf: `{"name":"n","type":"rail","mode":"vf","runtimeConfig":{"infinibandGUID":"00:11:22:33:44:55:66:77"}}`,
			check: func(t *testing.T, c *Rail) {
				if c.InfinibandGUID().String() != "00:11:22:33:44:55:66:77" {
					t.Errorf("GUID = %s, want the runtime's", c.InfinibandGUID())
				}
			}},
		{name: "malformed GUID", conf: `{"name":"n","type":"rail","mode":"vf","runtimeConfig":{"infinibandGUID":"00:11:22:33:44:55:66"}}`,
			wantCode: types.ErrInvalidNetworkConfig, wantText: `"infinibandGUID"; "00:11:22:33:44:55:66" is not a GUID: use eight bytes like 00:11:22:33:44:55:66:77`},
		{name: "GUID that is a MAC", conf: `{"name":"n","type":"rail","mode":"vf","runtimeConfig":{"infinibandGUID":"02:00:00:00:00:01"}}`,
			wantCode: types.ErrInvalidNetworkConfig, wantText: `"infinibandGUID"`},
		{name: "all-zero GUID", conf: `{"name":"n","type":"rail","mode":"vf","runtimeConfig":{"infinibandGUID":"00:00:00:00:00:00:00:00"}}`,
			wantCode: types.ErrInvalidNetworkConfig, wantText: `not all zero`},
		{name: "broadcast GUID", conf: `{"name":"n","type":"rail","mode":"vf","runtimeConfig":{"infinibandGUID":"ff:ff:ff:ff:ff:ff:ff:ff"}}`,
			wantCode: types.ErrInvalidNetworkConfig, wantText: `"infinibandGUID"`},
		{name: "GUID outside vf mode", conf: `{"name":"n","type":"rail","mode":"ipoib","runtimeConfig":{"infinibandGUID":"00:11:22:33:44:55:66:77"}}`,
			wantCode: types.ErrInvalidNetworkConfig, wantText: `"infinibandGUID"`},
		{name: "pkey in vf mode", conf: `{"name":"n","type":"rail","mode":"vf","pkey":"0x8001"}`,
			wantCode: types.ErrInvalidNetworkConfig, wantText: `cannot be applied in mode vf`},
		{name: "min above max", conf: `{"name":"n","type":"rail","mode":"vf","min_tx_rate":200,"max_tx_rate":100}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"min_tx_rate"`},
		{name: "vfPerGPU in vf mode", conf: `{"name":"n","type":"rail","mode":"vf","vfPerGPU":false}`, check: func(t *testing.T, c *Rail) {
			if c.VFPerGPU == nil || *c.VFPerGPU {
				t.Errorf("vfPerGPU = %v, want false given (it overrides the pool's)", c.VFPerGPU)
			}
		}},
		{name: "vfPerGPU in move mode", conf: `{"name":"n","type":"rail","vfPerGPU":true}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"vfPerGPU"`},
		{name: "vfPerGPU not a bool", conf: `{"name":"n","type":"rail","mode":"vf","vfPerGPU":"yes"}`, wantCode: types.ErrDecodingFailure, wantText: `vfPerGPU`},
		{name: "bad mtu", conf: `{"name":"n","type":"rail","mtu":70000}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"mtu"`},
		{name: "relative socket", conf: `{"name":"n","type":"rail","socket":"raild.sock"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"socket"`},
		{name: "bad pool", conf: `{"name":"n","type":"rail","pool":"a b"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"pool"`},
		{name: "long prefix", conf: `{"name":"n","type":"rail","ifPrefix":"averylongprefix"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"ifPrefix"`},
		{name: "bad pkey", conf: `{"name":"n","type":"rail","pkey":"0x7fff"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"pkey"`},
		{name: "bad link layer", conf: `{"name":"n","type":"rail","linkLayer":"ib"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"linkLayer"`},
		{name: "bad rail", conf: `{"name":"n","type":"rail","rail":-1}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"rail"`},
		{name: "bad timeout", conf: `{"name":"n","type":"rail","timeout":"soon"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"timeout"`},
		{name: "ipam given", conf: `{"name":"n","type":"rail","ipam":{"type":"host-local"}}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"ipam"`},
		{name: "bad nic", conf: `{"name":"n","type":"rail","nics":["a/b"]}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `nics[0]`},
		{name: "not json", conf: `{`, wantCode: types.ErrDecodingFailure},
		{name: "key in another case", conf: `{"name":"n","type":"rail","mode":"move","MODE":"macvlan"}`, wantCode: types.ErrUnsupportedField, wantText: `write "mode"`},
		{name: "key in another case alone", conf: `{"name":"n","type":"rail","Pool":"p"}`, wantCode: types.ErrUnsupportedField, wantText: `"Pool"`},
		{name: "nested key in another case", conf: `{"name":"n","type":"rail","args":{"cni":{"POOL":"x"}}}`, wantCode: types.ErrUnsupportedField, wantText: `args.cni.POOL`},
		{name: "key twice", conf: `{"name":"n","type":"rail","mode":"move","mode":"macvlan"}`, wantCode: types.ErrDecodingFailure, wantText: `twice`},
		{name: "trailing data", conf: `{"name":"n","type":"rail"} {"mode":"x"}`, wantCode: types.ErrDecodingFailure, wantText: `trailing`},
		{name: "onRaildDown", conf: `{"name":"n","type":"rail","onRaildDown":"pass-through"}`, check: func(t *testing.T, c *Rail) {
			if c.OnRaildDown != RaildDownPassThrough {
				t.Errorf("onRaildDown = %q", c.OnRaildDown)
			}
		}},
		{name: "maxDistance", conf: `{"name":"n","type":"rail","maxDistance":"phb"}`, check: func(t *testing.T, c *Rail) {
			if c.MaxClass == nil || *c.MaxClass != topology.PHB {
				t.Errorf("maxDistance = %v", c.MaxClass)
			}
		}},
		{name: "no maxDistance is permissive", conf: `{"name":"n","type":"rail"}`, check: func(t *testing.T, c *Rail) {
			if c.MaxClass != nil {
				t.Errorf("maxDistance = %v, want none", *c.MaxClass)
			}
		}},
		{name: "unresolvedGPUs ignore", conf: `{"name":"n","type":"rail","unresolvedGPUs":"ignore"}`, check: func(t *testing.T, c *Rail) {
			if c.UnresolvedGPUs != api.UnresolvedGPUsIgnore {
				t.Errorf("unresolvedGPUs = %q", c.UnresolvedGPUs)
			}
		}},
		{name: "bad unresolvedGPUs", conf: `{"name":"n","type":"rail","unresolvedGPUs":"skip"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"unresolvedGPUs"`},
		{name: "unresolvedGPUs is case-sensitive", conf: `{"name":"n","type":"rail","unresolvedGPUs":"Ignore"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `use "fail"`},
		{name: "bad maxDistance", conf: `{"name":"n","type":"rail","maxDistance":"close"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"maxDistance"`},
		{name: "ifNames default", conf: `{"name":"n","type":"rail"}`, check: func(t *testing.T, c *Rail) {
			if c.IfNames != api.IfNamesOrder {
				t.Errorf("ifNames = %q", c.IfNames)
			}
		}},
		{name: "ifNames rail", conf: `{"name":"n","type":"rail","ifNames":"rail"}`, check: func(t *testing.T, c *Rail) {
			if c.IfNames != api.IfNamesRail {
				t.Errorf("ifNames = %q", c.IfNames)
			}
		}},
		{name: "bad ifNames", conf: `{"name":"n","type":"rail","ifNames":"pci"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"ifNames"`},
		{name: "bad onRaildDown", conf: `{"name":"n","type":"rail","onRaildDown":"ignore"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"onRaildDown"`},
		{name: "link layer in any case", conf: `{"name":"n","type":"rail","linkLayer":"infiniband"}`, check: func(t *testing.T, c *Rail) {
			if c.LinkLayer != "InfiniBand" {
				t.Errorf("linkLayer = %q", c.LinkLayer)
			}
		}},
		{name: "link layer against mode", conf: `{"name":"n","type":"rail","mode":"macvlan","linkLayer":"InfiniBand"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `needs Ethernet`},
		{name: "huge value quoted in part", conf: `{"name":"n","type":"rail","mode":"` + strings.Repeat("m", 1<<20) + `"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `bytes in all`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := LoadRail([]byte(tt.conf))
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("LoadRail: %v", err)
				}
				tt.check(t, conf)
				return
			}
			var cniErr *types.Error
			if !errors.As(err, &cniErr) {
				t.Fatalf("want CNI error code %d, got %v", tt.wantCode, err)
			}
			if cniErr.Code != tt.wantCode || !strings.Contains(cniErr.Error(), tt.wantText) {
				t.Errorf("got code %d %q; want code %d mentioning %q", cniErr.Code, cniErr.Error(), tt.wantCode, tt.wantText)
			}
		})
	}
}

func TestLoadIPAM(t *testing.T) {
	tests := []struct {
		name     string
		conf     string
		wantCode uint
		wantText string
	}{
		{name: "ok, main plugin fields ignored", conf: `{"name":"n","type":"macvlan","master":"eth1","ipam":{"type":"rail-ipam","pool":"p"}}`},
		{name: "missing ipam", conf: `{"name":"n","type":"macvlan"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"ipam"`},
		{name: "unknown ipam field", conf: `{"name":"n","ipam":{"type":"rail-ipam","subnet":"10.0.0.0/24"}}`, wantCode: types.ErrUnsupportedField, wantText: "subnet"},
		{name: "bad socket", conf: `{"name":"n","ipam":{"type":"rail-ipam","socket":"x"}}`, wantCode: types.ErrInvalidNetworkConfig, wantText: "ipam.socket"},
		{name: "bad pool", conf: `{"name":"n","ipam":{"type":"rail-ipam","pool":"../x"}}`, wantCode: types.ErrInvalidNetworkConfig, wantText: "ipam.pool"},
		{name: "null ipam", conf: `{"name":"n","ipam":null}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"ipam"`},
		{name: "ipam not an object", conf: `{"name":"n","ipam":"rail-ipam"}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"ipam"`},
		{name: "IPAM in another case is not ipam", conf: `{"name":"n","IPAM":{"type":"rail-ipam"}}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `"ipam"`},
		{name: "ipam key in another case", conf: `{"name":"n","ipam":{"type":"rail-ipam","Pool":"p"}}`, wantCode: types.ErrUnsupportedField, wantText: `write "pool"`},
		{name: "ipam without type", conf: `{"name":"n","ipam":{"pool":"p"}}`, wantCode: types.ErrInvalidNetworkConfig, wantText: `ipam.type`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadIPAM([]byte(tt.conf))
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("LoadIPAM: %v", err)
				}
				return
			}
			var cniErr *types.Error
			if !errors.As(err, &cniErr) || cniErr.Code != tt.wantCode || !strings.Contains(cniErr.Error(), tt.wantText) {
				t.Errorf("got %v; want code %d mentioning %q", excerpt(err), tt.wantCode, tt.wantText)
			}
		})
	}
}

func excerpt(err error) string {
	if err == nil {
		return "<nil>"
	}
	return api.Excerpt(err.Error(), 500)
}

func TestErrorsQuoteBoundedExcerpts(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	for _, conf := range []string{
		`{"name":"n","type":"rail","mode":"` + huge + `"}`,
		`{"name":"n","type":"rail","pool":"` + huge + `"}`,
		`{"name":"n","type":"rail","nics":["` + huge + `/"]}`,
		`{"name":"n","type":"rail","` + huge + `":1}`,
		`{"name":"n","type":"rail","mtu":"` + huge + `"}`,
	} {
		_, err := LoadRail([]byte(conf))
		if err == nil || len(err.Error()) > 4096 {
			t.Errorf("LoadRail: error of %d bytes (%s): want a bounded excerpt", len(excerpt(err)), excerpt(err))
		}
	}
}

func TestParsePodKeys(t *testing.T) {
	tests := []struct {
		args string
		want PodKeys
	}{
		{"", PodKeys{}},
		{"IgnoreUnknown=1;K8S_POD_NAME=p;K8S_POD_NAMESPACE=ns;K8S_POD_UID=u", PodKeys{Namespace: "ns", Name: "p", UID: "u"}},
		{"K8S_POD_UID=u;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;OTHER=x", PodKeys{Namespace: "ns", Name: "p", UID: "u"}},
	}
	for _, tt := range tests {
		got, err := ParsePodKeys(tt.args)
		if err != nil || got != tt.want {
			t.Errorf("ParsePodKeys(%q) = %+v, %v; want %+v", tt.args, got, err, tt.want)
		}
	}
	if _, err := ParsePodKeys("broken"); err == nil {
		t.Error("ParsePodKeys(\"broken\"): want an error")
	}
}
