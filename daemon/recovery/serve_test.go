package recovery_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/recovery"
	"github.com/railcni/rail/daemon/serve"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestServeRefusesWipedStateDir: the whole state dir is gone while a pod
// holds an address rail gave it (a rail interface in a real pod netns):
// `raild serve` refuses to start empty and names `raild recover`.
func TestServeRefusesWipedStateDir(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces")
	nsDir := t.TempDir()
	pod, _, _ := recovery.RailPod(t, nsDir, "10.66.0.5/24")
	dir, err := os.MkdirTemp("", "rs-wiped-") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root, cfgPath, stateDir := filepath.Join(dir, "root"), filepath.Join(dir, "raild.yaml"), filepath.Join(dir, "state")
	if _, err := fakesys.Write(root, "lab-1x1", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte("pools:\n  - name: prefill\n    subnet: 10.66.0.0/24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = serve.Run([]string{"--config", cfgPath, "--root", root, "--state-dir", stateDir, "--netns-dir", nsDir,
		"--socket", filepath.Join(dir, "s.sock"), "--node-name", "n1", "--log-level", "error"})
	if err == nil {
		t.Fatal("raild serve started with an empty lease store while a pod holds 10.66.0.5")
	}
	line := "raild serve: " + err.Error()
	for _, want := range []string{"not raild's first start", "rail0 in pod netns " + pod + " holds 10.66.0.5/24 of pool prefill",
		"raild recover --config <raild's config> --state-dir " + stateDir + " --netns-dir " + nsDir} {
		if !strings.Contains(line, want) {
			t.Errorf("%q: want %q in it", line, want)
		}
	}
	if _, err := os.Stat(filepath.Join(stateDir, "leases.db")); err == nil {
		t.Error("the refused start made a lease store")
	}
}
