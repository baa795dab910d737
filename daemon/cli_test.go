package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestTopoJSONShape checks `raild topo --root DIR --json` on every built-in machine.
func TestTopoJSONShape(t *testing.T) {
	for _, name := range fakesys.Names() {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			spec, err := fakesys.Write(root, name, fakesys.Options{})
			if err != nil {
				t.Fatal(err)
			}
			report, err := topoReport(root, filepath.Join(root, "no.sock"))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := printJSON(&buf, report); err != nil {
				t.Fatal(err)
			}
			var got struct {
				GPUs     []map[string]any             `json:"gpus"`
				NICs     []map[string]any             `json:"nics"`
				Matrix   map[string]map[string]string `json:"matrix"`
				Affinity map[string]string            `json:"affinity"`
			}
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.GPUs) != len(spec.GPUs) || len(got.NICs) != len(spec.Targets()) || len(got.Matrix) != len(spec.GPUs) {
				t.Fatalf("gpus %d nics %d matrix %d; want %d, %d, %d", len(got.GPUs), len(got.NICs), len(got.Matrix),
					len(spec.GPUs), len(spec.Targets()), len(spec.GPUs))
			}
			for _, key := range []string{"index", "pci", "numa"} {
				if len(got.GPUs) > 0 {
					if _, ok := got.GPUs[0][key]; !ok {
						t.Errorf("gpu object lacks %q: %v", key, got.GPUs[0])
					}
				}
			}
			for _, key := range []string{"name", "netdev", "state", "linkLayer", "numa", "uverbs"} {
				if _, ok := got.NICs[0][key]; !ok {
					t.Errorf("nic object lacks %q: %v", key, got.NICs[0])
				}
			}
			var text bytes.Buffer
			if err := topology.WriteText(&text, report); err != nil || text.Len() == 0 {
				t.Fatalf("text report: %v, %d bytes", err, text.Len())
			}
		})
	}
}

func TestRailIndex(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		rails   config.Rails
		want    map[string]int
		wantErr bool
	}{
		{name: "affinity order", want: map[string]int{"mlx5_0": 0, "mlx5_1": 1, "mlx5_2": 2, "mlx5_3": 3}},
		{name: "explicit by name and pci", rails: config.Rails{NICs: map[string]int{"mlx5_3": 0, m.NICs[0].PCI: 5}},
			want: map[string]int{"mlx5_3": 0, m.NICs[0].Name: 5}},
		{name: "unknown nic", rails: config.Rails{NICs: map[string]int{"mlx5_9": 0}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := railIndex(&config.Config{Rails: tt.rails}, m)
			if tt.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("railIndex = %v, %v; want %v", got, err, tt.want)
			}
			for nic, r := range tt.want {
				if got[nic] != r {
					t.Errorf("rail of %s = %d, want %d", nic, got[nic], r)
				}
			}
		})
	}
}

func TestInstallFileIsAtomicAndExecutable(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	src := filepath.Join(from, "rail")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(to, "rail")
	if err := os.WriteFile(dst, []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := installFile(src, dst); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(dst)
	info, _ := os.Stat(dst)
	if err != nil || string(data) != "#!/bin/sh\necho new\n" || info.Mode().Perm() != 0o755 {
		t.Fatalf("installed %q mode %v, %v", data, info.Mode(), err)
	}
	entries, _ := os.ReadDir(to)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
	if err := installFile(filepath.Join(from, "missing"), dst); err == nil {
		t.Fatal("missing source: want an error")
	}
}
