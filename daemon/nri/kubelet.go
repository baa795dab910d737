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

// podLookup is one PodResources call for a sandbox; done closes when its
// fields are set.
type podLookup struct {
	done  chan struct{}
	byCtr map[string]podinfo.Held
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
	source  *podinfo.GPUSource
	timeout time.Duration // one kubelet call
	wait    time.Duration // CreateContainer's wait for a call on its way
	calls   chan struct{} // one token per call in flight
	// answered is called with every answer (nil: nothing to do), off the
	// hooks, before the lookup is marked done.
	answered func(pod *nriapi.PodSandbox, byCtr map[string]podinfo.Held)

	mu        sync.Mutex
	bySandbox map[string]*podLookup
}

func newKubeletGPUs(source *podinfo.GPUSource, answered func(*nriapi.PodSandbox, map[string]podinfo.Held)) *kubeletGPUs {
	return &kubeletGPUs{source: source, timeout: kubeletLookupTimeout, wait: kubeletWait, answered: answered,
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
	go k.fetch(l, pod)
	return l
}

func (k *kubeletGPUs) fetch(l *podLookup, pod *nriapi.PodSandbox) {
	defer close(l.done)
	namespace, name := pod.GetNamespace(), pod.GetName()
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
	byCtr, err := k.source.ContainerGPUs(ctx, namespace, name)
	if err != nil {
		l.err = fmt.Errorf("asking the kubelet for pod %s/%s's GPUs: %w", namespace, name, err)
		return
	}
	l.byCtr = byCtr
	if k.answered != nil {
		k.answered(pod, byCtr)
	}
}

// containerNICs returns the DRA NICs the kubelet gave a container, from
// the answer asked for at RunPodSandbox (or Synchronize); it waits at most
// k.wait for one on its way and never asks again (a sandbox it never saw
// start gets nothing).
func (k *kubeletGPUs) containerNICs(pod *nriapi.PodSandbox, ctr string) ([]podinfo.DRANIC, []podinfo.Unresolved, error) {
	k.mu.Lock()
	l, ok := k.bySandbox[pod.GetId()]
	k.mu.Unlock()
	if !ok {
		return nil, nil, nil
	}
	if !l.answered(k.wait) {
		return nil, nil, fmt.Errorf("the kubelet has not said which DRA NICs pod %s/%s holds within %s",
			pod.GetNamespace(), pod.GetName(), k.wait)
	}
	if l.err != nil {
		return nil, nil, l.err
	}
	held := l.byCtr[ctr]
	return held.NICs, held.NICErrors, nil
}

// containerGPUs returns what the kubelet gave a container, from the answer
// asked for at RunPodSandbox; it waits at most k.wait for one on its way.
func (k *kubeletGPUs) containerGPUs(pod *nriapi.PodSandbox, ctr string) (podinfo.Held, error) {
	l := k.start(pod)
	if !l.answered(k.wait) {
		return podinfo.Held{}, fmt.Errorf("the kubelet has not said which GPUs pod %s/%s holds within %s",
			pod.GetNamespace(), pod.GetName(), k.wait)
	}
	if l.err != nil {
		return podinfo.Held{}, l.err
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
