package nri

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/pkg/api"
)

// startRuntime runs the runtime side of NRI (what containerd embeds) on a
// socket in dir.
func startRuntime(t *testing.T, dir, socket string) *adaptation.Adaptation {
	t.Helper()
	sync := func(ctx context.Context, cb adaptation.SyncCB) error {
		_, err := cb(ctx, nil, nil)
		return err
	}
	update := func(context.Context, []*adaptation.ContainerUpdate) ([]*adaptation.ContainerUpdate, error) {
		return nil, nil
	}
	r, err := adaptation.New("fake-runtime", "v0", sync, update,
		adaptation.WithSocketPath(socket),
		adaptation.WithPluginPath(filepath.Join(dir, "plugins")),
		adaptation.WithPluginConfigPath(filepath.Join(dir, "conf.d")))
	if err != nil {
		t.Fatalf("adaptation.New: %v", err)
	}
	if err := r.Start(); err != nil {
		t.Fatalf("runtime start: %v", err)
	}
	return r
}

// injectedThroughRuntime asks the runtime to create a container until the
// plugin has (re)registered and answers with the lease's device.
func injectedThroughRuntime(t *testing.T, r *adaptation.Adaptation) []*nriapi.LinuxDevice {
	t.Helper()
	req := &adaptation.CreateContainerRequest{
		Pod:       &nriapi.PodSandbox{Id: "s1", Name: "p", Namespace: "default"},
		Container: &nriapi.Container{Id: "c1", PodSandboxId: "s1", Name: "app", Linux: &nriapi.LinuxContainer{}},
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		rpl, err := r.CreateContainer(t.Context(), req)
		if err == nil && len(rpl.GetAdjust().GetLinux().GetDevices()) > 0 {
			return rpl.GetAdjust().GetLinux().GetDevices()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the plugin never answered through the runtime")
	return nil
}

// socketProxy forwards unix connections from one socket to another so a
// test can cut them all, as a dying containerd does (an in-process
// adaptation's Stop leaves external plugin connections open).
type socketProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func startProxy(t *testing.T, socket, target string) *socketProxy {
	t.Helper()
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	p := &socketProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
	})
	return p
}

func (p *socketProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("unix", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

// cut closes every forwarded connection.
func (p *socketProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestRunRegistersAndReconnects: the plugin registers with a real NRI
// runtime, injects through it, and registers again after the runtime
// restarts on the same socket; Run returns nil when its context ends.
func TestRunRegistersAndReconnects(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, "nri.sock")
	runtimeSocket := filepath.Join(dir, "runtime.sock")
	proxy := startProxy(t, socket, runtimeSocket)
	st := newFakeState()
	st.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_2")
	p, logs := newTestPlugin(t, Config{Socket: socket, PluginIndex: "42", PluginName: "rail-test"}, t.TempDir(), st)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	r := startRuntime(t, dir, runtimeSocket)
	devs := injectedThroughRuntime(t, r)
	if devs[0].Path != "/dev/infiniband/uverbs2" || devs[0].Major != 231 || devs[0].Minor != 194 {
		t.Fatalf("first device through the runtime: %+v", devs[0])
	}
	r.Stop()
	proxy.cut()

	r2 := startRuntime(t, dir, runtimeSocket)
	defer r2.Stop()
	injectedThroughRuntime(t, r2)
	if n := len(logs.records(t, "NRI connection ended")); n < 1 {
		t.Fatalf("want the lost connection logged, logs:\n%s", logs)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v after its context ended", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	done <- nil // for the cleanup
}

// TestRunWaitsForTheRuntime: with no runtime listening Run keeps trying
// instead of failing, and stops cleanly.
func TestRunWaitsForTheRuntime(t *testing.T) {
	p, logs := newTestPlugin(t, Config{Socket: filepath.Join(t.TempDir(), "absent.sock")}, t.TempDir(), newFakeState())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for len(logs.records(t, "NRI connection ended")) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(logs.records(t, "NRI connection ended")); n < 2 {
		t.Fatalf("want repeated attempts, got %d:\n%s", n, logs)
	}
}
