package nri

import (
	"context"
	"fmt"
	"sync"
	"time"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/podinfo"
)

const (
	// kubeletLookupTimeout bounds one PodResources call, made off the hook.
	kubeletLookupTimeout = 5 * time.Second
	// kubeletWait bounds how long CreateContainer waits for an answer still
	// on its way (well under containerd's 2 s NRI request timeout); past it
	// the container gets nothing from gpuAutoInject.
	kubeletWait = 500 * time.Millisecond
	// kubeletCalls bounds the calls in flight (Synchronize starts one per
	// running pod).
	kubeletCalls = 8
)

// PodResources is the kubelet's account of the devices each container of
// a pod was given, device plugins and DRA claims (daemon/podinfo's Client).
type PodResources interface {
	ContainerGPUs(ctx context.Context, namespace, name string, resources []string) (map[string]podinfo.Devices, error)
}

// Kubelet is where gpuAutoInject learns which GPUs a container was given.
type Kubelet struct {
	// Pods is the PodResources API; nil: only CDI devices name GPUs.
	Pods PodResources
	// GPUResources are the resource names whose device IDs are GPUs
	// (podinfo.DefaultResource when empty).
	GPUResources []string
	// DRA maps DRA-allocated GPUs through the node's ResourceSlices; nil
	// (no API server): a container's DRA GPUs are reported as unknown.
	DRA podinfo.DRASlices
	// GPUDRADrivers are the DRA drivers whose devices are GPUs
	// (podinfo.DefaultDRADriver when empty).
	GPUDRADrivers []string
}

// ctrGPUs is what the kubelet gave one container.
type ctrGPUs struct {
	gpus    []int
	unknown []string // why each device the kubelet names maps to no GPU of this node
}

// podLookup is one PodResources call for a sandbox; done closes when its
// fields are set.
type podLookup struct {
	done  chan struct{}
	byCtr map[string]ctrGPUs
	err   error
}

// answered waits at most wait for the answer and tells whether it came.
func (l *podLookup) answered(wait time.Duration) bool {
	select {
	case <-l.done:
		return true
	default:
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-l.done:
		return true
	case <-timer.C:
		return false
	}
}

func (l *podLookup) failed() bool {
	select {
	case <-l.done:
		return l.err != nil
	default:
		return false
	}
}

// kubeletGPUs asks the kubelet once per sandbox, when the sandbox starts,
// and keeps the answer for the sandbox's containers.
type kubeletGPUs struct {
	kubelet  Kubelet
	affinity *gpuAffinity
	timeout  time.Duration // one kubelet call
	wait     time.Duration // CreateContainer's wait for a call on its way
	calls    chan struct{} // one token per call in flight

	mu        sync.Mutex
	bySandbox map[string]*podLookup
}

func newKubeletGPUs(k Kubelet, a *gpuAffinity) *kubeletGPUs {
	return &kubeletGPUs{kubelet: k, affinity: a, timeout: kubeletLookupTimeout, wait: kubeletWait,
		calls: make(chan struct{}, kubeletCalls), bySandbox: map[string]*podLookup{}}
}

// start asks the kubelet about a sandbox in the background, unless an
// answer is there or on its way; a failed answer is asked again.
func (k *kubeletGPUs) start(pod *nriapi.PodSandbox) *podLookup {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l, ok := k.bySandbox[pod.GetId()]; ok && !l.failed() {
		return l
	}
	l := &podLookup{done: make(chan struct{})}
	k.bySandbox[pod.GetId()] = l
	go k.fetch(l, pod.GetNamespace(), pod.GetName())
	return l
}

func (k *kubeletGPUs) fetch(l *podLookup, namespace, name string) {
	defer close(l.done)
	ctx, cancel := context.WithTimeout(context.Background(), k.timeout)
	defer cancel()
	select {
	case k.calls <- struct{}{}:
		defer func() { <-k.calls }()
	case <-ctx.Done():
		l.err = fmt.Errorf("asking the kubelet for pod %s/%s's GPUs: %d calls already in flight: %w",
			namespace, name, kubeletCalls, ctx.Err())
		return
	}
	byCtr, err := k.kubelet.Pods.ContainerGPUs(ctx, namespace, name, k.kubelet.GPUResources)
	if err != nil {
		l.err = fmt.Errorf("asking the kubelet for pod %s/%s's GPUs: %w", namespace, name, err)
		return
	}
	l.byCtr = make(map[string]ctrGPUs, len(byCtr))
	for ctr, devices := range byCtr {
		devices.DRA = podinfo.GPUDevices(devices.DRA, k.kubelet.GPUDRADrivers)
		gpus, failed := k.affinity.resolver.ResolveDevices(ctx, devices, k.kubelet.DRA)
		var unknown []string
		for _, f := range failed {
			unknown = append(unknown, f.Err.Error())
		}
		l.byCtr[ctr] = ctrGPUs{gpus: gpus, unknown: unknown}
	}
}

// containerGPUs returns what the kubelet gave a container, from the answer
// asked for at RunPodSandbox; it waits at most k.wait for one on its way.
func (k *kubeletGPUs) containerGPUs(pod *nriapi.PodSandbox, ctr string) (ctrGPUs, error) {
	l := k.start(pod)
	if !l.answered(k.wait) {
		return ctrGPUs{}, fmt.Errorf("the kubelet has not said which GPUs pod %s/%s holds within %s",
			pod.GetNamespace(), pod.GetName(), k.wait)
	}
	if l.err != nil {
		return ctrGPUs{}, l.err
	}
	return l.byCtr[ctr], nil
}

// forget drops a sandbox's answer.
func (k *kubeletGPUs) forget(sandbox string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.bySandbox, sandbox)
}

// reset drops every answer (before a full Synchronize).
func (k *kubeletGPUs) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.bySandbox = map[string]*podLookup{}
}
