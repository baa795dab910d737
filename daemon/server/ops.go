package server

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/railcni/rail/daemon/metrics"
)

// ReadyCheck is one thing /readyz waits for. Its name is all /readyz
// tells: the ops port has no authentication, so the reason (paths, the
// conf dir's state) goes to raild's log and to `raild doctor`, never to
// the answer.
type ReadyCheck struct {
	Name string // api-socket, lease-store, cni-entry, api-server
	Err  func() error
}

// OpsHandler serves /metrics, /healthz (the process answers) and /readyz
// (every check passes). A failing check's reason is logged when it
// changes.
func OpsHandler(m *metrics.Metrics, checks []ReadyCheck, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var mu sync.Mutex
	last := map[string]string{} // check → the reason last logged
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		var failing []string
		mu.Lock()
		for _, c := range checks {
			err := c.Err()
			reason := ""
			if err != nil {
				failing = append(failing, c.Name)
				reason = err.Error()
			}
			if reason != last[c.Name] {
				if reason != "" {
					log.Warn("not ready", "check", c.Name, "err", reason)
				} else {
					log.Info("ready again", "check", c.Name)
				}
				last[c.Name] = reason
			}
		}
		mu.Unlock()
		if len(failing) > 0 {
			http.Error(w, "not ready: "+strings.Join(failing, ", ")+" (the reason is in raild's log)", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	return mux
}
