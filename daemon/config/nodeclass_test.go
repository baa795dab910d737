package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mixed is the seeds' lab as one config: V100 nodes with one dual-port IB
// card (only its first port cabled), A100 nodes with two IB cards and an
// Ethernet LAG shared in macvlan mode, and the default for the rest.
const mixed = `kubernetes: {enabled: "true"}
nodeName: n1
nics: [mlx5_0, mlx5_1]
pools:
  - {name: ib, subnet: 10.77.0.0/24}
  - {name: roce, subnet: 10.78.0.0/24}
nodeClasses:
  - name: v100
    nodeSelector: {matchLabels: {nvidia.com/gpu.family: volta}}
    nics: [mlx5_0]
    modes: [move]
    rails: {nics: {mlx5_0: 0}}
  - name: a100
    nodeSelector:
      matchExpressions: [{key: nvidia.com/gpu.family, operator: In, values: [ampere]}]
    nics: [mlx5_0, mlx5_2, mlx5_bond_0]
    modes: [move, macvlan]
    attachPolicy: annotated
    allowProtectedNICs: [mlx5_bond_0]
    pools:
      roce: {nics: [mlx5_bond_0]}
`

func TestApplyNodeClass(t *testing.T) {
	tests := []struct {
		labels    map[string]string
		class     string
		nics      string
		modes     string
		policy    string
		rails     map[string]int
		roceNICs  string
		allowNICs string
	}{
		{labels: map[string]string{"nvidia.com/gpu.family": "volta"}, class: "v100", nics: "mlx5_0", modes: "move",
			policy: "gpu-or-annotated", rails: map[string]int{"mlx5_0": 0}},
		{labels: map[string]string{"nvidia.com/gpu.family": "ampere", "zone": "a"}, class: "a100", nics: "mlx5_0,mlx5_2,mlx5_bond_0",
			modes: "move,macvlan", policy: "annotated", roceNICs: "mlx5_bond_0", allowNICs: "mlx5_bond_0"},
		{labels: map[string]string{"nvidia.com/gpu.family": "hopper"}, class: "", nics: "mlx5_0,mlx5_1", policy: "gpu-or-annotated"},
		{labels: nil, class: "", nics: "mlx5_0,mlx5_1", policy: "gpu-or-annotated"},
	}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			cfg := load(t, mixed)
			class, err := cfg.ApplyNodeClass(tt.labels)
			if err != nil {
				t.Fatal(err)
			}
			modes := make([]string, len(cfg.Modes))
			for i, m := range cfg.Modes {
				modes[i] = string(m)
			}
			got := []string{class, strings.Join(cfg.NICs, ","), strings.Join(modes, ","), string(cfg.AttachPolicy),
				strings.Join(cfg.Pools[1].NICs, ","), strings.Join(cfg.AllowProtectedNICs, ",")}
			want := []string{tt.class, tt.nics, tt.modes, tt.policy, tt.roceNICs, tt.allowNICs}
			if !slices.Equal(got, want) {
				t.Errorf("class, nics, modes, policy, roce pool nics, allowProtectedNICs = %q, want %q", got, want)
			}
			if len(cfg.Rails.NICs) != len(tt.rails) || cfg.Rails.NICs["mlx5_0"] != tt.rails["mlx5_0"] {
				t.Errorf("rails = %v, want %v", cfg.Rails.NICs, tt.rails)
			}
			if len(cfg.Pools[0].NICs) != 0 {
				t.Errorf("pool ib bound to %v on class %q: no class binds it", cfg.Pools[0].NICs, class)
			}
		})
	}
}

func TestNodeClassErrors(t *testing.T) {
	const head = "kubernetes: {enabled: \"true\"}\nnodeName: n1\npools: [{name: ib, subnet: 10.77.0.0/24}]\n"
	tests := []struct {
		name, yaml, wantErr string
	}{
		{name: "API off", yaml: "pools: []\nnodeClasses: [{name: a, nodeSelector: {matchLabels: {a: b}}}]\nkubernetes: {enabled: \"false\"}\n",
			wantErr: "nodeClasses: 1 class(es), but the API connection is off"},
		{name: "no name", yaml: head + "nodeClasses: [{nodeSelector: {matchLabels: {a: b}}}]\n", wantErr: "nodeClasses[0].name: empty"},
		{name: "same name", yaml: head + "nodeClasses: [{name: a, nodeSelector: {}}, {name: a, nodeSelector: {}}]\n",
			wantErr: `nodeClasses[1].name "a": two classes have this name`},
		{name: "no selector", yaml: head + "nodeClasses: [{name: a}]\n", wantErr: "nodeClasses[0].nodeSelector: missing"},
		{name: "bad selector", yaml: head + "nodeClasses: [{name: a, nodeSelector: {matchExpressions: [{key: a, operator: Near}]}}]\n",
			wantErr: "nodeClasses[0].nodeSelector: "},
		{name: "bad mode", yaml: head + "nodeClasses: [{name: a, nodeSelector: {}, modes: [sriov]}]\n", wantErr: `nodeClasses[0].modes[0] "sriov": want one of move, macvlan, ipvlan, ipoib, vf`},
		{name: "bad policy", yaml: head + "nodeClasses: [{name: a, nodeSelector: {}, attachPolicy: some}]\n", wantErr: `nodeClasses[0].attachPolicy "some"`},
		{name: "unknown pool", yaml: head + "nodeClasses: [{name: a, nodeSelector: {}, pools: {roce: {nics: [mlx5_2]}}}]\n",
			wantErr: "nodeClasses[0].pools[roce]: no pool of that name"},
		{name: "empty pool binding", yaml: head + "nodeClasses: [{name: a, nodeSelector: {}, pools: {ib: {}}}]\n",
			wantErr: "nodeClasses[0].pools[ib]: give nics or rail"},
		{name: "bad class rail", yaml: head + "nodeClasses: [{name: a, nodeSelector: {}, rails: {nics: {mlx5_0: 64}}}]\n",
			wantErr: "nodeClasses[0].rails.nics[mlx5_0] = 64"},
		{name: "empty NIC", yaml: head + "nodeClasses: [{name: a, nodeSelector: {}, nics: [\"\"]}]\n", wantErr: "nodeClasses[0].nics[0]: empty"},
		{name: "top-level bad mode", yaml: head + "modes: [host]\n", wantErr: `modes[0] "host"`},
		{name: "top-level empty allow", yaml: head + "allowProtectedNICs: [\"\"]\n", wantErr: "allowProtectedNICs[0]: empty"},
	}
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
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func load(t *testing.T, yaml string) *Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	return cfg
}
