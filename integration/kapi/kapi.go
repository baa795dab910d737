package kapi

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/integration/child"
)

// EnvBin names the directory holding etcd and kube-apiserver.
const EnvBin = "RAIL_KAPI_BIN"

// token is the static bearer token of the test admin (system:masters).
const token = "rail-kapi-admin"

// Server is a running etcd + kube-apiserver pair.
type Server struct {
	Dir        string // holds the PKI, the data and the logs
	Kubeconfig string
	Config     *rest.Config
	Clients    *kubeclient.Clients
}

// Start runs etcd and kube-apiserver on free loopback ports under a
// temp dir, waits for /readyz and stops both when the test ends. It
// skips the test when $RAIL_KAPI_BIN is not set.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := os.Getenv(EnvBin)
	if bin == "" {
		tb.Skipf("%s is not set: tests against a real API server run under integration/k8s/run.sh (make test-k8s)", EnvBin)
	}
	dir, err := os.MkdirTemp("", "rail-kapi-")
	if err != nil {
		tb.Fatalf("temp dir: %v", err)
	}
	s, err := start(bin, dir)
	tb.Cleanup(func() {
		if s != nil {
			s.stop()
		}
		if tb.Failed() {
			tb.Logf("API server logs kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	if err != nil {
		tb.Fatalf("start the API server (logs in %s): %v", dir, err)
	}
	return &s.Server
}

type running struct {
	Server
	procs []named
}

// named is a started server and its name, for errors.
type named struct {
	*child.Proc
	name string
}

func start(bin, dir string) (*running, error) {
	r := &running{Server: Server{Dir: dir}}
	p, err := writePKI(dir)
	if err != nil {
		return r, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return r, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	if err := r.launch(dir, "etcd", filepath.Join(bin, "etcd"), "--name", "kapi", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "kapi="+peerURL, "--listen-metrics-urls", "", "--unsafe-no-fsync"); err != nil {
		return r, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return r, fmt.Errorf("write token file: %w", err)
	}
	port := strconv.Itoa(ports[2])
	if err := r.launch(dir, "kube-apiserver", filepath.Join(bin, "kube-apiserver"), "--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", port,
		"--tls-cert-file", p.ServingCert, "--tls-private-key-file", p.ServingKey,
		"--client-ca-file", p.CA, "--token-auth-file", tokens, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", p.SAPub, "--service-account-signing-key-file", p.SAKey,
		"--service-cluster-ip-range", "10.96.0.0/16", "--disable-admission-plugins", "ServiceAccount",
		"--cert-dir", dir); err != nil {
		return r, err
	}
	r.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(r.Kubeconfig, "https://127.0.0.1:"+port, p.CA); err != nil {
		return r, err
	}
	if r.Config, err = kubeclient.Config(r.Kubeconfig); err != nil {
		return r, err
	}
	if r.Clients, err = kubeclient.New(r.Config, "rail-kapi-test"); err != nil {
		return r, err
	}
	return r, r.waitReady(90 * time.Second)
}

func (r *running) launch(dir, name, path string, args ...string) error {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return fmt.Errorf("%s log: %w", name, err)
	}
	defer log.Close()
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// The servers die with the test binary, even when it is killed, and
	// only then.
	proc, err := child.Start(cmd, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	r.procs = append(r.procs, named{proc, name})
	return nil
}

func (r *running) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		for _, p := range r.procs {
			select {
			case <-p.Done():
				return fmt.Errorf("%s exited: %v (its log: %s)", p.name, p.Err(), filepath.Join(r.Dir, p.name+".log"))
			default:
			}
		}
		body, err := r.Clients.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver not ready after %s: %w", timeout, last)
}

func (r *running) stop() {
	for i := len(r.procs) - 1; i >= 0; i-- {
		r.procs[i].Stop(10 * time.Second)
	}
}

func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func writeKubeconfig(path, server, ca string) error {
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kapi
  cluster: {server: %q, certificate-authority: %q}
users:
- name: admin
  user: {token: %s}
contexts:
- name: kapi
  context: {cluster: kapi, user: admin, namespace: default}
current-context: kapi
`, server, ca, token)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}
