package kapi_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/integration/kapi"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// kpodsRaild is a raild process on a fake machine, with two pools so
// that an ADD's pool comes from the pod's rail.dev/pool annotation.
type kpodsRaild struct {
	metrics string
	client  *api.Client
}

// startRaild builds raild once per test binary and runs it until the test
// ends, with its kubernetes section and extra flags (e.g. --kubeconfig).
func startRaild(t testing.TB, kubernetes map[string]string, flags ...string) *kpodsRaild {
	t.Helper()
	dir, root, err := harness.RaildDir("kpods-raild-", "lab-1x1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	port := freePort(t)
	raild, err := harness.StartRaild(harness.RaildOptions{Bin: raildBin(t), Dir: dir, Root: root, NodeName: kpodsNode, Args: flags,
		Config: harness.DaemonConfig{Cooldown: "0s", MetricsAddr: fmt.Sprintf("127.0.0.1:%d", port), Kubernetes: kubernetes,
			Pools: []ipam.PoolConfig{{Name: "prefill", Subnet: "10.61.0.0/24"}, {Name: "decode", Subnet: "10.62.0.0/24"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := raild.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("raild log:\n%s", raild.LogTail(200))
		}
	})
	return &kpodsRaild{metrics: fmt.Sprintf("http://127.0.0.1:%d", port), client: api.NewClient(raild.Socket, 15*time.Second)}
}

var builtRaild string

func raildBin(t testing.TB) string {
	t.Helper()
	if builtRaild != "" {
		return builtRaild
	}
	dir, err := os.MkdirTemp("", "kpods-bin-")
	if err != nil {
		t.Fatal(err)
	}
	if err := harness.BuildPackages(dir, "./daemon"); err != nil {
		t.Fatal(err)
	}
	builtRaild = filepath.Join(dir, "daemon")
	return builtRaild
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// readyz returns /readyz's status code and body.
func (r *kpodsRaild) readyz(t testing.TB) (int, string) {
	t.Helper()
	resp, err := http.Get(r.metrics + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// add asks for an address-only attachment (no netlink needed) of the pod,
// with the runtime passing no annotations unless given.
func (r *kpodsRaild) add(sandbox, pod, uid string, annotations map[string]string) (*api.Plan, error) {
	return r.client.Allocate(context.Background(), api.AllocateRequest{Sandbox: sandbox, CNIIfName: "net1", Network: "rail",
		Mode: api.ModeIPAM, PodNamespace: "default", PodName: pod, PodUID: uid, Annotations: annotations})
}

func wantPool(t *testing.T, plan *api.Plan, err error, pool string) {
	t.Helper()
	if err != nil {
		t.Fatalf("ADD: %v", err)
	}
	if len(plan.Interfaces) != 1 || plan.Interfaces[0].Pool != pool {
		t.Fatalf("plan %+v, want one interface from pool %s", plan, pool)
	}
}

func wantCode11(t *testing.T, err error, fragment string) {
	t.Helper()
	if !api.IsCode(err, api.CodeTryAgainLater) || api.IsUnreachable(err) || !strings.Contains(err.Error(), fragment) {
		t.Fatalf("ADD = %v, want raild's code 11 with %q", err, fragment)
	}
}

// TestRaildReadsAnnotationsFromTheAPIServer: raild with --kubeconfig takes
// the annotations of an ADD whose runtime passed none from its pod
// informer, and says when it cannot.
func TestRaildReadsAnnotationsFromTheAPIServer(t *testing.T) {
	s := kapi.Start(t)
	proxy := startProxy(t, strings.TrimPrefix(s.Config.Host, "https://"))
	r := startRaild(t, map[string]string{"podWait": "2s"}, "--kubeconfig", proxy.kubeconfig(t, s.Kubeconfig))
	kube := s.Clients.Kube
	waitFor(t, "/readyz", func() error {
		if code, body := r.readyz(t); code != http.StatusOK {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})

	t.Run("pod created after the ADD started", func(t *testing.T) {
		created := make(chan struct{})
		go func() {
			defer close(created)
			time.Sleep(300 * time.Millisecond)
			pod := kpodsPod("late", kpodsNode, map[string]string{api.AnnotationPool: "decode"})
			if _, err := kube.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
				t.Errorf("create pod: %v", err)
			}
		}()
		plan, err := r.add("sb-late", "late", "", nil)
		<-created
		wantPool(t, plan, err, "decode")
	})
	t.Run("runtime annotations win without asking", func(t *testing.T) {
		plan, err := r.add("sb-rt", "not-in-the-cluster", "u-rt", map[string]string{api.AnnotationPool: "prefill"})
		wantPool(t, plan, err, "prefill")
	})
	t.Run("pod on another node", func(t *testing.T) {
		pod := createPod(t, kube, kpodsPod("other", "kpods-node-2", map[string]string{api.AnnotationPool: "decode"}))
		_, err := r.add("sb-other", "other", string(pod.UID), nil)
		wantCode11(t, err, `pod default/other: cannot read its annotations (the runtime passed none): not seen within kubernetes.podWait (2s): the pod is not on this node (kpods-node-1) but on "kpods-node-2"`)
	})
	t.Run("uid mismatch", func(t *testing.T) {
		createPod(t, kube, kpodsPod("renewed", kpodsNode, map[string]string{api.AnnotationPool: "decode"}))
		_, err := r.add("sb-renewed", "renewed", "11111111-2222-3333-4444-555555555555", nil)
		wantCode11(t, err, "(a recreated pod)")
	})
	t.Run("API server gone, then back", func(t *testing.T) {
		proxy.down()
		waitFor(t, "/readyz says the API connection fails", func() error {
			if code, body := r.readyz(t); code != http.StatusServiceUnavailable || !strings.Contains(body, "api-server") {
				return fmt.Errorf("%d %s", code, body)
			}
			return nil
		})
		metrics := scrape(t, r.metrics)
		if !strings.Contains(metrics, "rail_apiserver_up 0") {
			t.Errorf("rail_apiserver_up not 0 while the API server is gone")
		}
		// Not waited for podWait: the connection is known to fail.
		_, err := r.add("sb-down", "never", "u-never", nil)
		wantCode11(t, err, "raild's connection to the API server fails")
		// A pod cached before still gets its annotations; a runtime that passes them still works.
		plan, err := r.add("sb-cached", "late", "", nil)
		wantPool(t, plan, err, "decode")
		plan, err = r.add("sb-rt2", "x", "u-x", map[string]string{api.AnnotationPool: "prefill"})
		wantPool(t, plan, err, "prefill")
		if _, err := r.client.Status(context.Background(), ""); err != nil {
			t.Errorf("STATUS while the API server is gone: %v (want OK: see docs/operating.md)", err)
		}
		proxy.up(t)
		waitFor(t, "/readyz back", func() error {
			if code, body := r.readyz(t); code != http.StatusOK {
				return fmt.Errorf("%d %s", code, body)
			}
			return nil
		})
		if metrics := scrape(t, r.metrics); !strings.Contains(metrics, "rail_apiserver_up 1") ||
			strings.Contains(metrics, "rail_apiserver_watch_errors_total 0\n") {
			t.Errorf("after recovery want rail_apiserver_up 1 and counted errors:\n%s", grepLines(metrics, "rail_apiserver"))
		}
	})
}

// TestRaildWithoutAPIServer: a raild whose API server never answers
// starts, serves ADDs whose runtime passes annotations, fails the others
// with code 11, and says so on /readyz; a raild with the connection off
// keeps today's behaviour.
func TestRaildWithoutAPIServer(t *testing.T) {
	kubeconfig := deadKubeconfig(t)
	r := startRaild(t, nil, "--kubeconfig", kubeconfig)
	plan, err := r.add("sb-1", "p", "u-1", map[string]string{api.AnnotationPool: "decode"})
	wantPool(t, plan, err, "decode")
	waitFor(t, "the connection is known to fail", func() error {
		_, err := r.add("sb-2", "q", "u-2", nil)
		if err == nil || !strings.Contains(err.Error(), "connection to the API server fails") {
			return fmt.Errorf("ADD = %v", err)
		}
		return nil
	})
	_, err = r.add("sb-2", "q", "u-2", nil)
	wantCode11(t, err, "pod default/q: cannot read its annotations")
	if code, body := r.readyz(t); code != http.StatusServiceUnavailable || !strings.Contains(body, "api-server") {
		t.Errorf("/readyz = %d %s, want 503 naming the api-server check (terse: the reason is in raild's log)", code, body)
	}

	off := startRaild(t, map[string]string{"enabled": "false"})
	plan, err = off.add("sb-3", "p", "u-3", map[string]string{api.AnnotationPool: "prefill"})
	wantPool(t, plan, err, "prefill")
	if _, err := off.add("sb-4", "q", "u-4", nil); !api.IsCode(err, api.CodeInvalidConfig) {
		t.Errorf("no connection, no annotations, two pools: %v, want today's code 7 (no pool named)", err)
	}
	if code, body := off.readyz(t); code != http.StatusOK {
		t.Errorf("/readyz without a connection = %d %s", code, body)
	}
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func grepLines(text, fragment string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, fragment) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
