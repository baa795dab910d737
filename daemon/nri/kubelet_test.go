package nri

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/daemon/podinfo/podinfotest"
	"github.com/railcni/rail/pkg/api"
)

var _ podinfo.Kubelet = (*podinfo.Client)(nil)

// fakeKubelet answers ContainerGPUs (device-plugin IDs only) from a table and counts the calls.
// With block set it answers only when block closes or the call's context
// ends.
type fakeKubelet struct {
	mu        sync.Mutex
	pods      map[string]map[string][]string // "ns/name" -> container -> IDs
	resources []string
	err       error
	block     chan struct{}
	entered   chan struct{} // when set, one token per call that starts
	calls     int
	inflight  int
	most      int // most calls in flight at once
}

func (f *fakeKubelet) ContainerGPUs(ctx context.Context, ns, name string, resources []string) (map[string]podinfo.Devices, error) {
	f.mu.Lock()
	f.calls++
	f.inflight++
	f.most = max(f.most, f.inflight)
	f.resources = resources
	block, err, pod := f.block, f.err, f.pods[ns+"/"+name]
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}()
	if f.entered != nil {
		f.entered <- struct{}{}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	if pod == nil {
		return nil, fmt.Errorf("pod %s/%s: %w", ns, name, podinfo.ErrPodNotFound)
	}
	out := make(map[string]podinfo.Devices, len(pod))
	for ctr, ids := range pod {
		out[ctr] = podinfo.Devices{IDs: ids}
	}
	return out, nil
}

// PodGPUs is never what the NRI plugin asks: it asks per container.
func (f *fakeKubelet) PodGPUs(context.Context, string, string, []string) (podinfo.Devices, error) {
	return podinfo.Devices{}, errors.New("the NRI plugin asked the kubelet for a whole pod")
}

func (f *fakeKubelet) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// TestAutoInjectFromKubelet: the GPUs of a container are the ones the
// kubelet says that container holds; anything the kubelet cannot confirm
// gives nothing, and the container still starts.
func TestAutoInjectFromKubelet(t *testing.T) {
	gpuPod := map[string][]string{"app": {"1"}, "gpus": {"GPU-00000003-aaaa-bbbb-cccc-dddddddddddd", "2"}}
	tests := []struct {
		name    string
		ns      string
		kubelet *fakeKubelet
		leases  func(*fakeState)
		ctr     *nriapi.Container
		hca     string // "": nothing injected
		reason  string // logged when the kubelet could not tell
		asked   bool
	}{
		{name: "the container's own GPU, not the env's", ctr: ctr("app", "NVIDIA_VISIBLE_DEVICES=all"),
			hca: "=mlx5_1", asked: true},
		{name: "each container its own GPUs", ctr: ctr("gpus"), hca: "=mlx5_3,mlx5_2", asked: true},
		{name: "container without GPUs in a GPU pod", ctr: ctr("sidecar", "NVIDIA_VISIBLE_DEVICES=all"), asked: true},
		{name: "kubelet and CDI together", ctr: withCDI(ctr("app"), "nvidia.com/gpu=0"), hca: "=mlx5_0,mlx5_1", asked: true},
		{name: "pod the kubelet does not know", ns: "gpu2", ctr: ctr("app", "NVIDIA_VISIBLE_DEVICES=all"),
			reason: "pod not known to the kubelet", asked: true},
		{name: "kubelet failing", kubelet: &fakeKubelet{err: errors.New("connection refused")},
			ctr: ctr("app", "NVIDIA_VISIBLE_DEVICES=0"), reason: "connection refused", asked: true},
		{name: "kubelet not answering in time", kubelet: &fakeKubelet{block: make(chan struct{})},
			ctr: ctr("app", "NVIDIA_VISIBLE_DEVICES=0"), reason: "has not said which GPUs", asked: true},
		{name: "GPU whose NIC another pod moved in", ctr: ctr("app"), asked: true,
			leases: func(f *fakeState) { f.add("other", api.ModeMove, "10.56.0.7/24", "mlx5_1") }},
		{name: "namespace not listed: kubelet not asked", ns: "default", ctr: ctr("app")},
		{name: "pod with a lease: kubelet not asked", ctr: ctr("app"), hca: "=mlx5_0",
			leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := tt.kubelet
			if k == nil {
				k = &fakeKubelet{}
			}
			k.pods = map[string]map[string][]string{"gpu/p-s1": gpuPod}
			if k.block != nil {
				t.Cleanup(func() { close(k.block) })
			}
			st := newFakeState()
			if tt.leases != nil {
				tt.leases(st)
			}
			cfg := Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"gpu", "gpu2"}, Memlock: "8Mi"}
			p, logs := newKubeletPlugin(t, cfg, t.TempDir(), st, &podinfo.GPUSource{Kubelet: k, Resources: []string{"example.com/gpu"}})
			if k.block != nil {
				p.kubelet.wait = 50 * time.Millisecond // the answer never comes in time
			}
			ns := tt.ns
			if ns == "" {
				ns = "gpu"
			}
			sandbox := pod("s1", ns, nil)
			if err := p.RunPodSandbox(context.Background(), sandbox); err != nil {
				t.Fatal(err)
			}
			if tt.asked && k.block == nil && k.err == nil {
				<-p.kubelet.start(sandbox).done // answered off the hook, as in a running node
			}
			adj, _, err := p.CreateContainer(context.Background(), sandbox, tt.ctr)
			if err != nil {
				t.Fatalf("CreateContainer: %v", err)
			}
			if got := summarize(adj).Env[envNCCLHCA]; got != tt.hca || (tt.hca == "" && adj != nil) {
				t.Errorf("%s = %q, want %q (%v)\nlogs:\n%s", envNCCLHCA, got, tt.hca, summarize(adj), logs)
			}
			if asked := k.callCount() > 0; asked != tt.asked {
				t.Errorf("kubelet asked: %v, want %v", asked, tt.asked)
			}
			if tt.asked && tt.kubelet == nil && strings.Join(k.resources, ",") != "example.com/gpu" {
				t.Errorf("kubelet asked for resources %q, want the configured ones", k.resources)
			}
			recs := logs.records(t, "GPUs from the kubelet unknown")
			if (tt.reason != "") != (len(recs) == 1) {
				t.Fatalf("want a logged reason only when the kubelet could not tell; logs:\n%s", logs)
			}
			if reason, _ := recs0(recs)["error"].(string); !strings.Contains(reason, tt.reason) {
				t.Errorf("logged reason %q, want it to say %q", reason, tt.reason)
			}
		})
	}
}

func recs0(recs []map[string]any) map[string]any {
	if len(recs) == 0 {
		return map[string]any{}
	}
	return recs[0]
}

// TestKubeletAskedOncePerSandbox: RunPodSandbox asks; the containers read
// the answer; a failed answer is asked again; the answer goes with the
// sandbox.
func TestKubeletAskedOncePerSandbox(t *testing.T) {
	k := &fakeKubelet{pods: map[string]map[string][]string{"gpu/p-s1": {"a": {"0"}, "b": {"1"}}}}
	cfg := Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}}
	p, _ := newKubeletPlugin(t, cfg, t.TempDir(), newFakeState(), &podinfo.GPUSource{Kubelet: k})
	sandbox := pod("s1", "gpu", nil)
	if err := p.RunPodSandbox(context.Background(), sandbox); err != nil {
		t.Fatal(err)
	}
	<-p.kubelet.start(sandbox).done
	for _, name := range []string{"a", "b", "a"} {
		if adj, _, _ := p.CreateContainer(context.Background(), sandbox, ctr(name)); adj == nil {
			t.Fatalf("container %s got nothing", name)
		}
	}
	if n := k.callCount(); n != 1 {
		t.Fatalf("kubelet asked %d times for one sandbox, want 1", n)
	}

	if err := p.RemovePodSandbox(context.Background(), sandbox); err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	k.err = errors.New("kubelet restarting")
	k.mu.Unlock()
	if adj, _, _ := p.CreateContainer(context.Background(), sandbox, ctr("a")); adj != nil {
		t.Fatal("injected while the kubelet failed")
	}
	k.mu.Lock()
	k.err = nil
	k.mu.Unlock()
	if adj, _, _ := p.CreateContainer(context.Background(), sandbox, ctr("a")); adj == nil {
		t.Fatal("a failed answer was not asked again")
	}
	if n := k.callCount(); n != 3 {
		t.Fatalf("kubelet asked %d times, want 3 (start, after removal, after the failure)", n)
	}
}

// TestAutoInjectWithPodinfo wires the real PodResources client against the
// kubelet stand-in.
func TestAutoInjectWithPodinfo(t *testing.T) {
	_, client := podinfotest.Kubelet(t, []podinfotest.Pod{{Namespace: "gpu", Name: "p-s1", Containers: []podinfotest.Container{
		{Name: "app", Devices: map[string][]string{"nvidia.com/gpu": {"GPU-00000002-aaaa-bbbb-cccc-dddddddddddd"}}},
		{Name: "sidecar"},
	}}})
	cfg := Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"gpu"}}
	p, logs := newKubeletPlugin(t, cfg, t.TempDir(), newFakeState(), &podinfo.GPUSource{Kubelet: client, Resources: []string{"nvidia.com/gpu"}})
	sandbox := pod("s1", "gpu", nil)
	<-p.kubelet.start(sandbox).done
	for name, want := range map[string]string{"app": "=mlx5_2", "sidecar": ""} {
		adj, _, err := p.CreateContainer(context.Background(), sandbox, ctr(name, "NVIDIA_VISIBLE_DEVICES=all"))
		if got := summarize(adj).Env[envNCCLHCA]; err != nil || got != want {
			t.Errorf("container %s: %s = %q, %v; want %q\nlogs:\n%s", name, envNCCLHCA, got, err, want, logs)
		}
	}
}

// TestSynchronizeBoundsKubeletCalls: a reconnect with many running pods
// asks the kubelet about each, at most kubeletCalls at a time.
func TestSynchronizeBoundsKubeletCalls(t *testing.T) {
	const pods = 3 * kubeletCalls
	k := &fakeKubelet{pods: map[string]map[string][]string{}, block: make(chan struct{}), entered: make(chan struct{}, pods)}
	var sandboxes []*nriapi.PodSandbox
	for i := range pods {
		sb := pod(fmt.Sprintf("s%d", i), "gpu", nil)
		k.pods["gpu/"+sb.Name] = map[string][]string{"app": {"0"}}
		sandboxes = append(sandboxes, sb)
	}
	cfg := Config{GPUAutoInject: true, GPUAutoInjectNamespaces: []string{"*"}}
	p, _ := newKubeletPlugin(t, cfg, t.TempDir(), newFakeState(), &podinfo.GPUSource{Kubelet: k})
	if _, err := p.Synchronize(context.Background(), sandboxes, nil); err != nil {
		t.Fatal(err)
	}
	for range kubeletCalls {
		<-k.entered
	}
	close(k.block)
	for _, sb := range sandboxes {
		l := p.kubelet.start(sb)
		<-l.done
		if l.err != nil {
			t.Fatalf("lookup of %s: %v", sb.Name, l.err)
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.calls != pods || k.most > kubeletCalls {
		t.Fatalf("%d calls, at most %d at once; want %d calls, at most %d at once", k.calls, k.most, pods, kubeletCalls)
	}
}
