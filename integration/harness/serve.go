package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// PodServer is an HTTP server listening inside a pod's netns.
type PodServer struct {
	Addr string
	srv  *http.Server
	done chan error
}

// Serve listens on addr (for example "10.77.0.2:8000") inside the pod
// netns and answers every GET with "<pod> on <addr>: hello <remote>", so
// the caller sees which address it came from.
func (p *Pod) Serve(addr string) (*PodServer, error) {
	var ln net.Listener
	err := p.Netns.Do(func() error {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pod %s: listen on %s: %w", p.Name, addr, err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s/%s on %s: hello %s", p.Namespace, p.Name, addr, r.RemoteAddr)
	})
	s := &PodServer{Addr: addr, srv: &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second},
		done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(ln) }()
	p.servers = append(p.servers, s)
	return s, nil
}

// Close stops the server and releases its socket (which holds the netns).
func (s *PodServer) Close() error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	s.srv = nil
	return err
}

// Get sends an HTTP GET from inside the pod netns and returns the body.
func (p *Pod) Get(ctx context.Context, url string) (string, error) {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var conn net.Conn
			err := p.Netns.Do(func() error {
				var err error
				conn, err = dialer.DialContext(ctx, network, addr)
				return err
			})
			return conn, err
		},
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("pod %s: GET %s: %w", p.Name, url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("pod %s: GET %s: %w", p.Name, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return "", fmt.Errorf("pod %s: read answer of %s: %w", p.Name, url, err)
	}
	return string(body), nil
}

// closeServers stops the pod's servers.
func (p *Pod) closeServers() error {
	var errs []error
	for _, s := range p.servers {
		errs = append(errs, s.Close())
	}
	p.servers = nil
	return errors.Join(errs...)
}
