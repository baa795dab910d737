package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string // "" = valid
		check   func(*testing.T, *Config)
	}{
		{name: "minimal", yaml: "pools:\n  - name: rail\n    subnet: 10.77.0.0/24\n", check: func(t *testing.T, c *Config) {
			if c.Root != "/" || c.StateDir != DefaultStateDir || c.CooldownDuration != DefaultCooldown || c.GPUResources[0] != DefaultGPUResource {
				t.Errorf("defaults not applied: %+v", c)
			}
			if !c.UseAffinityRails() {
				t.Error("rails should follow affinity by default")
			}
		}},
		{name: "explicit rails", yaml: "rails:\n  nics: {mlx5_0: 1}\ncooldown: 0s\npools: []\n", check: func(t *testing.T, c *Config) {
			if c.UseAffinityRails() || c.CooldownDuration != 0 {
				t.Errorf("rails/cooldown wrong: %+v", c)
			}
		}},
		{name: "nri section", yaml: "nri:\n  enabled: true\n  memlock: 8Mi\npools: []\n", check: func(t *testing.T, c *Config) {
			if !c.NRI.Enabled || c.NRI.Memlock != "8Mi" {
				t.Errorf("nri section lost: %+v", c.NRI)
			}
		}},
		{name: "nri gpuAutoInject without namespaces", yaml: "nri:\n  enabled: true\n  gpuAutoInject: true\npools: []\n",
			wantErr: "nri.gpuAutoInjectNamespaces"},
		{name: "nri bad memlock", yaml: "nri:\n  enabled: true\n  memlock: 8MB\npools: []\n", wantErr: "nri.memlock"},
		{name: "unknown key", yaml: "pool:\n  - name: x\n", wantErr: `unknown field "pool"`},
		{name: "bad cooldown", yaml: "cooldown: soon\npools: []\n", wantErr: `cooldown "soon"`},
		{name: "bad rail", yaml: "rails:\n  nics: {mlx5_0: 99}\npools: []\n", wantErr: "rails.nics[mlx5_0]"},
		{name: "relative socket", yaml: "socket: raild.sock\npools: []\n", wantErr: `socket "raild.sock"`},
		{name: "not yaml", yaml: "pools: [", wantErr: "config"},
		{name: "pool maxDistance", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    maxDistance: phb\n", check: func(t *testing.T, c *Config) {
			if c.Pools[0].MaxDistance != "phb" {
				t.Errorf("maxDistance lost: %+v", c.Pools[0])
			}
		}},
		{name: "bad pool maxDistance", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    maxDistance: near\n",
			wantErr: `pools[0].maxDistance "near": use PIX, PXB, PHB, P2C, NODE or SYS`},
		{name: "pool unresolvedGPUs and DRA drivers", yaml: "gpuDRADrivers: [gpu.example.com]\npools:\n  - name: r\n    subnet: 10.77.0.0/24\n    unresolvedGPUs: ignore\n", check: func(t *testing.T, c *Config) {
			if c.Pools[0].UnresolvedGPUs != "ignore" || len(c.GPUDRADrivers) != 1 || c.GPUDRADrivers[0] != "gpu.example.com" {
				t.Errorf("unresolvedGPUs or gpuDRADrivers lost: %+v %v", c.Pools[0], c.GPUDRADrivers)
			}
		}},
		{name: "pool VF settings and vfPerGPU", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    vfPerGPU: true\n    vlan: 100\n    vlanQoS: 3\n" +
			"    vlanProto: 802.1ad\n    spoofchk: \"off\"\n    trust: \"on\"\n    link_state: enable\n    min_tx_rate: 10\n    max_tx_rate: 1000\n",
			check: func(t *testing.T, c *Config) {
				p := c.Pools[0]
				if p.VFPerGPU == nil || !*p.VFPerGPU || *p.VLAN != 100 || *p.VLANQoS != 3 || p.VLANProto != "802.1ad" || p.Spoofchk != "off" ||
					p.Trust != "on" || p.LinkState != "enable" || *p.MinTxRate != 10 || *p.MaxTxRate != 1000 {
					t.Errorf("VF settings lost: %+v", p)
				}
			}},
		{name: "pool vlan out of range", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    vlan: 4095\n",
			wantErr: `pools[0].vlan 4095 is out of range: use 0 (none) to 4094`},
		{name: "pool vlanQoS without vlan", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    vlanQoS: 2\n",
			wantErr: `pools[0].vlanQoS 2 needs a vlan`},
		{name: "pool spoofchk yes", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    spoofchk: \"yes\"\n",
			wantErr: `pools[0].spoofchk "yes": use on or off`},
		{name: "pool spoofchk and trust as YAML reads bare on/off", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    spoofchk: on\n    trust: off\n",
			check: func(t *testing.T, c *Config) {
				if p := c.Pools[0]; p.Spoofchk != "on" || p.Trust != "off" {
					t.Errorf("spoofchk %q trust %q, want on and off", p.Spoofchk, p.Trust)
				}
			}},
		{name: "pool trust a number", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    trust: 1\n",
			wantErr: `want on or off`},
		{name: "pool link_state", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    link_state: up\n",
			wantErr: `pools[0].link_state "up": use auto, enable or disable`},
		{name: "pool rates", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    min_tx_rate: 100\n    max_tx_rate: 10\n",
			wantErr: `pools[0].min_tx_rate 100 is above max_tx_rate 10`},
		{name: "pool mac", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    mac: 02:00:00:00:00:01\n",
			wantErr: `unknown field "pools[0].mac": a pool sets no mac`},
		{name: "DRA driver default", yaml: "pools: []\n", check: func(t *testing.T, c *Config) {
			if len(c.GPUDRADrivers) != 1 || c.GPUDRADrivers[0] != "gpu.nvidia.com" {
				t.Errorf("gpuDRADrivers = %v, want [gpu.nvidia.com]", c.GPUDRADrivers)
			}
		}},
		{name: "bad pool unresolvedGPUs", yaml: "pools:\n  - name: r\n    subnet: 10.77.0.0/24\n    unresolvedGPUs: skip\n",
			wantErr: `pools[0].unresolvedGPUs "skip": use "fail"`},
		{name: "bad DRA driver", yaml: "gpuDRADrivers: [\"gpu.nvidia.com/gpu\"]\npools: []\n", wantErr: `gpuDRADrivers[0] "gpu.nvidia.com/gpu"`},
		{name: "DRA NIC drivers default", yaml: "pools: []\n", check: func(t *testing.T, c *Config) {
			if !slices.Equal(c.DRANICDrivers, []string{"dra.net"}) {
				t.Errorf("draNICDrivers = %v, want [dra.net]", c.DRANICDrivers)
			}
		}},
		{name: "DRA NIC drivers off", yaml: "draNICDrivers: []\npools: []\n", check: func(t *testing.T, c *Config) {
			if c.DRANICDrivers == nil || len(c.DRANICDrivers) != 0 {
				t.Errorf("draNICDrivers = %#v, want an empty list (off)", c.DRANICDrivers)
			}
		}},
		{name: "DRA NIC drivers set", yaml: "draNICDrivers: [dra.net, sriovnetwork.k8snetworkplumbingwg.io]\npools: []\n", check: func(t *testing.T, c *Config) {
			if len(c.DRANICDrivers) != 2 {
				t.Errorf("draNICDrivers = %v", c.DRANICDrivers)
			}
		}},
		{name: "Rail's DRA driver off by default", yaml: "pools: []\n", check: func(t *testing.T, c *Config) {
			if c.DRA.Enabled {
				t.Error("dra is on by default")
			}
		}},
		{name: "Rail's DRA driver", yaml: "nodeName: n1\ndra:\n  enabled: true\n  sharedSlots: 4\npools: []\n", check: func(t *testing.T, c *Config) {
			if !c.DRA.Enabled || c.DRA.SharedSlots != 4 {
				t.Errorf("dra section lost: %+v", c.DRA)
			}
		}},
		{name: "Rail's DRA driver bad downAs", yaml: "dra:\n  enabled: true\n  downAs: hide\npools: []\n", wantErr: `dra.downAs "hide"`},
		{name: "Rail's DRA driver without the API", yaml: "kubernetes:\n  enabled: \"false\"\ndra:\n  enabled: true\npools: []\n",
			wantErr: "dra.enabled: true needs the API connection"},
		{name: "Rail's DRA driver named as a NIC driver it completes", yaml: "dra:\n  enabled: true\n  driverName: dra.net\npools: []\n",
			wantErr: `dra.driverName "dra.net" is also in gpuDRADrivers or draNICDrivers`},
		{name: "bad DRA NIC driver", yaml: "draNICDrivers: [\"dra.net/nic\"]\npools: []\n", wantErr: `draNICDrivers[0] "dra.net/nic": want a DRA driver name`},
		{name: "DRA NIC driver that is a GPU driver", yaml: "draNICDrivers: [gpu.nvidia.com]\npools: []\n",
			wantErr: `draNICDrivers[0] "gpu.nvidia.com" is also in gpuDRADrivers`},
		{name: "bad nri memlock while nri is off", yaml: "nri:\n  memlock: lots\npools: []\n", wantErr: `nri.memlock: "lots"`},
		{name: "bad nri index while nri is off", yaml: "nri:\n  enabled: false\n  pluginIndex: \"1\"\npools: []\n", wantErr: `nri.pluginIndex "1"`},
		{name: "bad nri stopGrace while nri is off", yaml: "nri:\n  stopGrace: -1s\npools: []\n", wantErr: `nri.stopGrace "-1s"`},
		{name: "bad device plugin while off", yaml: "devicePlugin:\n  dir: relative\npools: []\n", wantErr: `devicePlugin.dir "relative"`},
		{name: "sliced pool without node name", yaml: "pools:\n  - name: rail\n    subnet: 10.77.0.0/16\n    nodes:\n      - {node: n1, subnet: 10.77.1.0/24}\n",
			wantErr: `nodeName: empty, but pools[0] "rail" is sliced by node (nodes:): set nodeName in the config, --node-name, or $NODE_NAME`},
		{name: "sliced pool with node name", yaml: "nodeName: n1\npools:\n  - name: rail\n    subnet: 10.77.0.0/16\n    nodes:\n      - {node: n1, subnet: 10.77.1.0/24}\n",
			check: func(t *testing.T, c *Config) {
				if c.NodeName != "n1" {
					t.Errorf("nodeName = %q", c.NodeName)
				}
			}},
	}
	t.Setenv("NODE_NAME", "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if err == nil {
				err = cfg.Finish()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, cfg)
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file: want an error")
	}
}

// TestLoadRefusesNonRegular: a config path naming a FIFO, a socket, a
// device node or a folder is refused, naming it, without waiting for a
// writer.
func TestLoadRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "raild.yaml")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{{fifo, "is a FIFO"}, {"/dev/null", "is a device node"}, {dir, "is a directory"}} {
		_, err := Load(tt.path)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("Load(%s) = %v; want an error naming it, with %q", tt.path, err, tt.want)
		}
	}
}
