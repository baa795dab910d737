package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hangGuard bounds how long a test waits for the server to drop a
// connection; the server's own timeouts are set far below it.
const hangGuard = 20 * time.Second

// startBare serves the handlers (no service behind them: these tests never
// get past reading the request) with the given timeouts.
func startBare(t *testing.T, tune func(*http.Server)) string {
	t.Helper()
	srv := New(nil, nil, nil, slog.New(slog.DiscardHandler))
	tune(srv.http)
	return serveTest(t, srv)
}

// serveTest serves srv on a fresh socket until the test ends.
func serveTest(t *testing.T, srv *Server) string {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "run", "raild.sock")
	ln, err := Listen(socket)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return socket
}

// TestStalledClientsDropped: a client that stops mid-header, mid-body or
// sits idle between calls loses its connection instead of holding it.
func TestStalledClientsDropped(t *testing.T) {
	const short = 200 * time.Millisecond
	tests := []struct {
		name     string
		tune     func(*http.Server)
		send     string
		wantResp string // the start of the answer before the server hangs up
	}{
		{name: "header stalls", tune: func(s *http.Server) { s.ReadHeaderTimeout = short },
			send: "POST /v1/allocate HTTP/1.1\r\nHost: raild\r\nContent-Le", wantResp: "HTTP/1.1 400"},
		{name: "body stalls", tune: func(s *http.Server) { s.ReadTimeout = short },
			send:     "POST /v1/allocate HTTP/1.1\r\nHost: raild\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"sandbox\":",
			wantResp: "HTTP/1.1 400"},
		{name: "idle after a call", tune: func(s *http.Server) { s.IdleTimeout = short },
			send:     "GET /v0/nothing HTTP/1.1\r\nHost: raild\r\n\r\n",
			wantResp: "HTTP/1.1 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			socket := startBare(t, tt.tune)
			conn, err := net.Dial("unix", socket)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SetDeadline(time.Now().Add(hangGuard)); err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(conn, tt.send); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(conn)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if got := resp.Proto + " " + resp.Status; !strings.HasPrefix(got, tt.wantResp) {
				t.Fatalf("answer %q, want %q", got, tt.wantResp)
			}
			if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
				t.Fatalf("connection still open after the client stalled (read: %v), want it closed by the server", err)
			}
		})
	}
}

// TestServerTimeouts: every connection timeout is set, and a handler may
// run as long as the longest timeout a plugin may be configured with.
func TestServerTimeouts(t *testing.T) {
	s := New(nil, nil, nil, slog.New(slog.DiscardHandler)).http
	const longestPluginTimeout = 5 * time.Minute // pkg/netconf: timeout up to 5m
	for name, d := range map[string]time.Duration{"ReadHeaderTimeout": s.ReadHeaderTimeout, "ReadTimeout": s.ReadTimeout,
		"WriteTimeout": s.WriteTimeout, "IdleTimeout": s.IdleTimeout} {
		if d <= 0 {
			t.Errorf("%s not set: a stalled client would hold its connection forever", name)
		}
	}
	if s.WriteTimeout <= longestPluginTimeout {
		t.Errorf("WriteTimeout %s would cut off a legitimate call of up to %s", s.WriteTimeout, longestPluginTimeout)
	}
}
