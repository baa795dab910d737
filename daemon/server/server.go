// Package server serves raild's versioned HTTP+JSON API on a root-only unix
// socket, in front of the service.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/pkg/api"
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// Connection timeouts. Callers are local processes that send a small
// request at once, so a slow header or body is a stuck or hostile client
// and is dropped. Handlers themselves may take as long as a caller may
// wait: the plugins' timeout setting goes up to 5 minutes.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second // header and body
	writeTimeout      = 5*time.Minute + 10*time.Second
	idleTimeout       = 30 * time.Second // keep-alive between calls
)

// Server is the socket API.
type Server struct {
	svc     *service.Service
	metrics *metrics.Metrics
	log     *slog.Logger
	http    *http.Server
	// podReports answers GET /v1/pods/... (nil: the checks are off).
	podReports PodReports
}

// New builds the handlers; m and reports may be nil.
func New(svc *service.Service, m *metrics.Metrics, reports PodReports, log *slog.Logger) *Server {
	s := &Server{svc: svc, metrics: m, podReports: reports, log: log}
	mux := http.NewServeMux()
	prefix := "/" + api.Version
	mux.HandleFunc("POST "+prefix+"/allocate", s.timed("allocate", s.allocate))
	mux.HandleFunc("POST "+prefix+"/release", s.timed("release", s.release))
	mux.HandleFunc("POST "+prefix+"/check", s.timed("check", s.check))
	mux.HandleFunc("POST "+prefix+"/gc", s.timed("gc", s.gc))
	mux.HandleFunc("GET "+prefix+"/status", s.timed("status", s.status))
	mux.HandleFunc("GET "+prefix+"/leases", s.timed("leases", s.leases))
	mux.HandleFunc("GET "+prefix+"/pools", s.timed("pools", s.pools))
	mux.HandleFunc("GET "+prefix+"/topology", s.timed("topology", s.topology))
	mux.HandleFunc("GET "+prefix+"/pods/{namespace}/{name}", s.timed("pod", s.pod))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &api.Error{Code: api.CodeIncompatibleVersion, Msg: "unknown call " + r.Method + " " + r.URL.Path,
			Details: "this raild speaks API " + api.Version + "; upgrade the plugin and raild together"})
	})
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout}
	return s
}

// Serve answers on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown lets in-flight calls finish.
func (s *Server) Shutdown(ctx context.Context) error { return s.http.Shutdown(ctx) }

func (s *Server) timed(endpoint string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h(w, r)
		if s.metrics != nil {
			s.metrics.Latency.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
		}
	}
}

func (s *Server) allocate(w http.ResponseWriter, r *http.Request) {
	var req api.AllocateRequest
	if !decode(w, r, &req) {
		return
	}
	plan, err := s.svc.Allocate(r.Context(), req)
	respond(w, plan, err)
}

func (s *Server) release(w http.ResponseWriter, r *http.Request) {
	var req api.AttachmentRequest
	if !decode(w, r, &req) {
		return
	}
	respond(w, struct{}{}, s.svc.Release(r.Context(), req))
}

func (s *Server) check(w http.ResponseWriter, r *http.Request) {
	var req api.AttachmentRequest
	if !decode(w, r, &req) {
		return
	}
	plan, err := s.svc.Check(r.Context(), req)
	respond(w, plan, err)
}

func (s *Server) gc(w http.ResponseWriter, r *http.Request) {
	var req api.GCRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := s.svc.GC(r.Context(), req)
	respond(w, res, err)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st, err := s.svc.Status(r.URL.Query().Get("pool"))
	respond(w, st, err)
}

func (s *Server) leases(w http.ResponseWriter, _ *http.Request) { respond(w, s.svc.Leases(), nil) }
func (s *Server) pools(w http.ResponseWriter, _ *http.Request)  { respond(w, s.svc.Pools(), nil) }
func (s *Server) topology(w http.ResponseWriter, _ *http.Request) {
	respond(w, s.svc.Topology(), nil)
}

func respond(w http.ResponseWriter, body any, err error) {
	if err != nil {
		var apiErr *api.Error
		if !errors.As(err, &apiErr) {
			apiErr = &api.Error{Code: api.CodeInternal, Msg: "internal error", Details: err.Error()}
		}
		writeError(w, apiErr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func writeError(w http.ResponseWriter, e *api.Error) {
	status := http.StatusBadRequest
	switch e.Code {
	case api.CodeTryAgainLater:
		status = http.StatusServiceUnavailable
	case api.CodeUnknownContainer:
		status = http.StatusNotFound
	case api.CodePoolExhausted, api.CodeNoNIC:
		status = http.StatusConflict
	case api.CodeInternal, api.CodeIO:
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e.Bounded())
}
