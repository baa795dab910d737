package serve

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/cniconf"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/server"
)

// /readyz says why rail's entry is not in place, and turns ready once it is.
func TestReadyzReportsCNIEntry(t *testing.T) {
	confDir, calico := calicoConfDir(t)
	os.RemoveAll(confDir)
	cfg := cniconf.Config{Mode: cniconf.ModeChained, ConfDir: confDir}
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := startCNIWatcher(ctx, cfg, slog.New(slog.DiscardHandler))
	m := metrics.New()
	ops := httptest.NewServer(server.OpsHandler(m, []server.ReadyCheck{{Name: "cni-entry", Err: ready}}, nil))
	defer ops.Close()

	if err := ready(); err == nil || !strings.Contains(err.Error(), "conf dir does not exist yet") {
		t.Fatalf("cni entry check = %v; want the reason (for the log and doctor)", err)
	}
	waitReadyz(t, ops.URL, http.StatusServiceUnavailable, "not ready: cni-entry")
	if err := os.Mkdir(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-calico.conflist"), calico, 0o600); err != nil {
		t.Fatal(err)
	}
	waitReadyz(t, ops.URL, http.StatusOK, "ready")
}

func TestReadyzNADModeIsReady(t *testing.T) {
	ready := startCNIWatcher(context.Background(), cniconf.Config{Mode: cniconf.ModeNAD}, slog.New(slog.DiscardHandler))
	if err := ready(); err != nil {
		t.Fatalf("nad mode: %v", err)
	}
}

// waitReadyz polls /readyz until it answers code with body; the deadline
// only bounds a hung test.
func waitReadyz(t *testing.T, url string, code int, body string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = resp.Status + " " + string(data)
		if resp.StatusCode == code && strings.Contains(string(data), body) {
			return
		}
	}
	t.Fatalf("/readyz never answered %d %q; last %s", code, body, last)
}

// calicoConfDir is a conf dir holding Calico's conflist.
func calicoConfDir(t *testing.T) (confDir string, calico []byte) {
	t.Helper()
	confDir = filepath.Join(t.TempDir(), "net.d")
	if err := os.Mkdir(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	calico, err := os.ReadFile("../cniconf/testdata/calico/10-calico.conflist")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-calico.conflist"), calico, 0o600); err != nil {
		t.Fatal(err)
	}
	return confDir, calico
}
