package serve

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// TestServeTopologyFile: raild places by the config's NCCL topology file
// (its snapshot says so), and refuses to start on a file it cannot use.
func TestServeTopologyFile(t *testing.T) {
	dir, root := machineDir(t, "azure-ndh100v5")
	good, err := filepath.Abs("../../pkg/topology/testdata/ndv5-topo.xml")
	if err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.xml")
	if err := os.WriteFile(garbage, []byte("<nope/>"), 0o600); err != nil {
		t.Fatal(err)
	}
	newCfg := func(name, file string) *config.Config {
		cfg := &config.Config{Root: root, Socket: filepath.Join(dir, name+".sock"), StateDir: filepath.Join(dir, name), NodeName: "n1",
			TopologyFile: file, Pools: []ipam.PoolConfig{{Name: "p", Subnet: "10.9.0.0/24"}}}
		if err := cfg.Finish(); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	log := slog.New(slog.DiscardHandler)
	for _, tt := range []struct{ name, file, want string }{
		{"missing", filepath.Join(dir, "missing.xml"), "missing.xml"},
		{"not NCCL XML", garbage, "want <system>"},
	} {
		err := serve(context.Background(), newCfg("bad", tt.file), log)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: serve = %v, want an error with %q", tt.name, err, tt.want)
		}
	}
	cfg := newCfg("good", good)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, log) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("raild: %v", err)
		}
	}()
	waitAnswers(t, cfg.Socket, done)
	raw, err := api.NewClient(cfg.Socket, 5*time.Second).Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var r topology.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.TopologyFile != good || r.Matrix["2"]["mlx5_ib2"] != topology.PIX || r.Sources["2"]["mlx5_ib2"] != topology.SourceFile {
		t.Errorf("raild's topology: file %q, GPU2–mlx5_ib2 %v from %q; want %s, PIX from the file",
			r.TopologyFile, r.Matrix["2"]["mlx5_ib2"], r.Sources["2"]["mlx5_ib2"], good)
	}
}
