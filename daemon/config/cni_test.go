package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/cniconf"
)

// The cni section: its defaults, an entry written as YAML, and errors
// that name the key.
func TestLoadCNISection(t *testing.T) {
	tests := []struct {
		name, yaml           string
		wantMode, wantEntry  string
		wantErr, wantConfDir string
	}{
		{name: "absent: nad, no conflist change", yaml: "pools: []\n", wantMode: cniconf.ModeNAD, wantEntry: cniconf.DefaultEntry,
			wantConfDir: cniconf.DefaultConfDir},
		{name: "chained with an entry", yaml: "pools: []\ncni:\n  mode: chained\n  confDir: /etc/cni/net.d\n  entry:\n    type: rail\n    mode: macvlan\n    pool: prefill\n",
			wantMode: cniconf.ModeChained, wantConfDir: "/etc/cni/net.d",
			wantEntry: `{"capabilities":{"io.kubernetes.cri.pod-annotations":true},"mode":"macvlan","pool":"prefill","type":"rail"}`},
		{name: "bad mode", yaml: "pools: []\ncni:\n  mode: chaining\n", wantErr: `cni.mode "chaining"`},
		{name: "bad entry", yaml: "pools: []\ncni:\n  entry:\n    mode: fast\n", wantErr: "cni.entry"},
		{name: "unknown key", yaml: "pools: []\ncni:\n  dir: /x\n", wantErr: `unknown field "cni.dir"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadYAML(t, tt.yaml)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error mentioning %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case cfg.CNI.Mode != tt.wantMode || string(cfg.CNI.Entry) != tt.wantEntry || cfg.CNI.ConfDir != tt.wantConfDir:
				t.Errorf("cni = %+v (entry %s)", cfg.CNI, cfg.CNI.Entry)
			}
		})
	}
}

// loadYAML loads and finishes a config given as text.
func loadYAML(t *testing.T, text string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ri-config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		return nil, err
	}
	return cfg, cfg.Finish()
}
