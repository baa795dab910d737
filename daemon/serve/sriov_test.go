package serve

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestEnableVFs: the config's sriov.createVFs, read from YAML, enables
// VFs on the PF without any (the write goes below the root), leaves the
// PF that has VFs alone and logs a rule it cannot apply.
func TestEnableVFs(t *testing.T) {
	root := t.TempDir()
	spec, err := fakesys.Write(root, "h100x8-cx7x8-sriov", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "pools: []\nsriov:\n  createVFs:\n  - {pfs: [mlx5_7, mlx5_0], numVFs: 3}\n  - {pfs: [nosuch], numVFs: 1}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Root = root
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	enableVFs(inv, cfg, slog.New(slog.NewTextHandler(&out, nil)))
	numVFs := func(pf int) string {
		raw, err := os.ReadFile(filepath.Join(root, "sys/bus/pci/devices", spec.PFs[pf].PCI, "sriov_numvfs"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(raw))
	}
	if numVFs(7) != "3" || numVFs(0) != "4" {
		t.Errorf("sriov_numvfs: mlx5_7 %s (want 3), mlx5_0 %s (want 4, unchanged)", numVFs(7), numVFs(0))
	}
	for _, want := range []string{`msg="VFs enabled" pf=` + spec.PFs[7].PCI + " vfs=3", `msg="VFs left as they are" pf=` + spec.PFs[0].PCI,
		`msg="VFs not enabled" pf=nosuch`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, out.String())
		}
	}
	if inv.Current().Cause != "VFs enabled" {
		t.Errorf("no rescan after enabling VFs: cause %q", inv.Current().Cause)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("pools: []\nsriov: {createVFs: [{pfs: [mlx5_7]}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err := config.Load(bad); err != nil || cfg.Finish() == nil || !strings.Contains(cfg.Finish().Error(), "sriov.createVFs[0].numVFs 0") {
		t.Errorf("a rule without numVFs was not refused naming the field")
	}
}

// TestOwnedPFs: sriov.ownPFs, read from YAML, goes to the sweep as
// written; a name that is no SR-IOV PF of the node is logged at start.
func TestOwnedPFs(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x8-sriov", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("pools: []\nsriov:\n  ownPFs: [mlx5_0, nosuch]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err == nil {
		err = cfg.Finish()
	}
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	got := ownedPFs(inv, cfg, slog.New(slog.NewTextHandler(&out, nil)))
	if strings.Join(got, ",") != "mlx5_0,nosuch" {
		t.Errorf("ownPFs for the sweep %q, want the config's", got)
	}
	for _, want := range []string{`names no SR-IOV PF of this node (yet)" pf=nosuch`, "found=1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, out.String())
		}
	}
	if got := ownedPFs(inv, &config.Config{}, slog.New(slog.NewTextHandler(&out, nil))); got != nil {
		t.Errorf("no ownPFs: %q, want none", got)
	}
}
