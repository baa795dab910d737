package nri

import (
	"context"
	"fmt"
	"time"

	nriapi "github.com/containerd/nri/pkg/api"
)

// releaseTimeout bounds one ReleaseSandbox call made from an event.
const releaseTimeout = 10 * time.Second

// pendingRelease is a ReleaseSandbox scheduled after StopPodSandbox.
type pendingRelease struct {
	timer *time.Timer
}

// RunPodSandbox comes after the pod's network is set up (containerd runs
// every CNI ADD of the pod before it): the moment to build the pod's
// record, what its leases give its containers (podrecord.go), and, for
// gpuAutoInject, to ask the
// kubelet (in the background) which GPUs the pod's containers hold.
func (p *Plugin) RunPodSandbox(_ context.Context, pod *nriapi.PodSandbox) error {
	call := p.begin(hookRunPodSandbox, pod, nil)
	p.warmPodRecord(&call)
	p.startKubeletLookup(pod)
	p.notify(pod.GetId())
	call.end(nil)
	return nil
}

// Synchronize (on every connection to the runtime) builds again the
// records of the pods that already run, and
// records the containers already running (for the readiness checks).
func (p *Plugin) Synchronize(_ context.Context, pods []*nriapi.PodSandbox, ctrs []*nriapi.Container) ([]*nriapi.ContainerUpdate, error) {
	sync := p.begin(hookSynchronize, nil, nil)
	p.pods.reset()
	if p.kubelet != nil {
		p.kubelet.reset()
	}
	p.retainDRANICs(pods)
	for _, pod := range pods {
		call := p.begin(hookSynchronize, pod, nil)
		p.warmPodRecord(&call)
		p.startKubeletLookup(pod)
	}
	p.syncContainers(pods, ctrs)
	sync.log().Info("synchronized with the runtime", "pods", len(pods))
	sync.end(nil)
	return nil, nil
}

// StopPodSandbox comes before the CNI DEL in containerd, so what the pod
// holds is released only if it still holds it after nri.stopGrace.
func (p *Plugin) StopPodSandbox(_ context.Context, pod *nriapi.PodSandbox) error {
	call := p.begin(hookStopPodSandbox, pod, nil)
	p.forgetSandbox(pod.GetId())
	if len(p.state.SandboxLeases(pod.GetId())) > 0 {
		p.scheduleRelease(pod)
	}
	call.end(nil)
	return nil
}

// RemovePodSandbox comes after both CNI DELs: whatever the pod still holds
// is released now. A failed release is logged and counted; the runtime
// goes on removing the pod.
func (p *Plugin) RemovePodSandbox(ctx context.Context, pod *nriapi.PodSandbox) error {
	call := p.begin(hookRemovePodSandbox, pod, nil)
	p.cancelRelease(pod.GetId())
	p.forgetSandbox(pod.GetId())
	call.end(p.release(ctx, &call))
	return nil
}

// forgetSandbox drops what was cached for a sandbox's containers.
func (p *Plugin) forgetSandbox(sandbox string) {
	p.pods.forget(sandbox)
	p.records.forget(sandbox)
	if p.kubelet != nil {
		p.kubelet.forget(sandbox)
	}
	if p.draHeld != nil {
		p.draHeld.Forget(sandbox)
	}
}

// release returns what a sandbox still holds; call names why (the hook,
// or the release scheduled after StopPodSandbox) and logs.
func (p *Plugin) release(ctx context.Context, call *hookCall) error {
	held := p.state.SandboxLeases(call.pod.GetId())
	if len(held) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	if err := p.state.ReleaseSandbox(ctx, call.pod.GetId()); err != nil {
		return fmt.Errorf("releasing the leases the CNI DEL left behind: %w", err)
	}
	call.log().Info("released leases the CNI DEL left behind", "leases", len(held))
	return nil
}

func (p *Plugin) scheduleRelease(pod *nriapi.PodSandbox) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.releases[pod.GetId()]; ok {
		return
	}
	id := pod.GetId()
	pr := &pendingRelease{}
	pr.timer = time.AfterFunc(p.cfg.stopGrace, func() {
		p.mu.Lock()
		current := p.releases[id] == pr
		delete(p.releases, id)
		p.mu.Unlock()
		if current {
			call := p.begin(hookStopPodSandbox, pod, nil)
			if err := p.release(context.Background(), &call); err != nil {
				call.log().Error("releasing a stopped sandbox's leases failed", "after", p.cfg.stopGrace, "error", err)
			}
		}
	})
	p.releases[id] = pr
}

func (p *Plugin) cancelRelease(sandbox string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr, ok := p.releases[sandbox]; ok {
		pr.timer.Stop()
		delete(p.releases, sandbox)
	}
}

// cancelAllReleases stops every scheduled release (when Run ends).
func (p *Plugin) cancelAllReleases() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, pr := range p.releases {
		pr.timer.Stop()
		delete(p.releases, id)
	}
}
