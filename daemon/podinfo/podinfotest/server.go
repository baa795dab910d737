// Package podinfotest serves the kubelet's PodResources API (v1) from an
// in-memory set of pods on a unix socket, for tests and the demo: the real
// generated gRPC service, so clients are exercised as against a kubelet.
// It sits beside podinfo (not under integration/, which product code and
// product tests must not import) so daemon's own tests can use it too.
package podinfotest

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Server is a running PodResources stand-in.
type Server struct {
	socket   string
	grpc     *grpc.Server
	store    *store
	served   chan error
	stopOnce sync.Once
}

// Start validates pods, listens on socket (creating its directory and
// replacing a stale socket file, as the kubelet does) and serves.
func Start(socket string, pods []Pod) (*Server, error) {
	if socket == "" {
		return nil, errors.New("podinfotest: socket path is empty")
	}
	if err := ValidatePods(pods); err != nil {
		return nil, fmt.Errorf("podinfotest: %w", err)
	}
	listener, err := listen(socket)
	if err != nil {
		return nil, err
	}
	s := &Server{
		socket: socket,
		grpc:   grpc.NewServer(),
		store:  &store{pods: clonePods(pods)},
		served: make(chan error, 1),
	}
	podresourcesapi.RegisterPodResourcesListerServer(s.grpc, s.store)
	go func() { s.served <- s.grpc.Serve(listener) }()
	return s, nil
}

// Socket is the path the server listens on.
func (s *Server) Socket() string { return s.socket }

// SetPods replaces the pods served. Invalid pods are refused and the
// previous set stays.
func (s *Server) SetPods(pods []Pod) error {
	if err := ValidatePods(pods); err != nil {
		return fmt.Errorf("podinfotest: %w", err)
	}
	s.store.setPods(clonePods(pods))
	return nil
}

// SetAllocatable sets what GetAllocatableResources reports (resource name
// → device IDs). With nil, it reports the union of the pods' devices.
func (s *Server) SetAllocatable(devices map[string][]string) {
	s.store.setAllocatable(devices)
}

// SetGetMode chooses how Get answers, to stand in for older kubelets.
func (s *Server) SetGetMode(mode GetMode) { s.store.setGetMode(mode) }

// Calls reports how many times each method was called.
func (s *Server) Calls() Calls { return s.store.callCounts() }

// Stop stops serving, waits for calls in flight and removes the socket.
// It is safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.grpc.GracefulStop()
		<-s.served
		// Closing the listener normally unlinks the socket already; a
		// socket left behind is stale and the next Start replaces it.
		_ = os.Remove(s.socket)
	})
}

// listen creates the socket's directory, refuses a socket something still
// answers on or a path that is not a socket, and removes a stale socket.
func listen(socket string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(socket), 0o750); err != nil {
		return nil, fmt.Errorf("podinfotest: socket directory: %w", err)
	}
	info, err := os.Lstat(socket)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("podinfotest: socket %s: %w", socket, err)
	case info.Mode().Type() != fs.ModeSocket:
		return nil, fmt.Errorf("podinfotest: %s exists and is not a socket; remove it or choose another --socket", socket)
	case answers(socket):
		return nil, fmt.Errorf("podinfotest: socket %s is in use by a running server", socket)
	default:
		if err := os.Remove(socket); err != nil {
			return nil, fmt.Errorf("podinfotest: remove stale socket: %w", err)
		}
	}
	listener, err := net.Listen("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("podinfotest: listen on %s: %w", socket, err)
	}
	return listener, nil
}

func answers(socket string) bool {
	conn, err := net.DialTimeout("unix", socket, 200*time.Millisecond)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
