package server

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/pkg/api"
)

func TestOpsHandler(t *testing.T) {
	m := metrics.New()
	m.WatchPools(func() []api.PoolStatus { return []api.PoolStatus{{Name: "prefill", Size: 254, Used: 3}} })
	m.Allocations.WithLabelValues("prefill", "move").Inc()
	tests := []struct {
		name   string
		ready  error
		path   string
		status int
		body   string
	}{
		{name: "metrics", path: "/metrics", status: 200, body: `rail_pool_used{pool="prefill"} 3`},
		{name: "allocations", path: "/metrics", status: 200, body: `rail_allocations_total{mode="move",pool="prefill"} 1`},
		{name: "healthz", path: "/healthz", status: 200, body: "ok"},
		{name: "ready", path: "/readyz", status: 200, body: "ready"},
		{name: "not ready", ready: errors.New("lease store closed"), path: "/readyz", status: 503, body: "not ready: lease-store"},
		{name: "not ready, paths kept out", ready: errors.New("open /var/lib/rail/leases.db: permission denied"), path: "/readyz", status: 503,
			body: "not ready: lease-store (the reason is in raild's log)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs strings.Builder
			log := slog.New(slog.NewTextHandler(&logs, nil))
			srv := httptest.NewServer(OpsHandler(m, []ReadyCheck{{Name: "api-socket", Err: func() error { return nil }},
				{Name: "lease-store", Err: func() error { return tt.ready }}}, log))
			defer srv.Close()
			resp, err := http.Get(srv.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.body) {
				t.Fatalf("%s: %d %q; want %d containing %q", tt.path, resp.StatusCode, body, tt.status, tt.body)
			}
			if tt.ready != nil && (strings.Contains(string(body), tt.ready.Error()) || !strings.Contains(logs.String(), tt.ready.Error())) {
				t.Fatalf("/readyz said %q, log %q: the reason belongs in the log only", body, logs.String())
			}
		})
	}
}
