package podinfotest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/podinfo"
)

// Kubelet starts a stand-in kubelet serving pods on a socket in the
// test's temp dir and dials it with raild's own client: the server and
// the client, both stopped when the test ends.
func Kubelet(t testing.TB, pods []Pod) (*Server, *podinfo.Client) {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "kubelet.sock")
	stub, err := Start(socket, pods)
	if err != nil {
		t.Fatalf("start the kubelet stand-in: %v", err)
	}
	t.Cleanup(stub.Stop)
	return stub, Dial(t, socket)
}

// Dial dials the PodResources socket with podinfo.Dial; the client is
// closed when the test ends.
func Dial(t testing.TB, socket string) *podinfo.Client {
	t.Helper()
	client, err := podinfo.Dial(context.Background(), socket, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", socket, err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}
