package nri

import (
	"context"
	"time"

	nriapi "github.com/containerd/nri/pkg/api"
)

// releaseTimeout bounds one ReleaseSandbox call made from an event.
const releaseTimeout = 10 * time.Second

// pendingRelease is a ReleaseSandbox scheduled after StopPodSandbox.
type pendingRelease struct {
	timer *time.Timer
}

// RunPodSandbox comes after the pod's network is set up: the moment to find
// the GID index of a macvlan address and, for gpuAutoInject, to ask the
// kubelet (in the background) which GPUs the pod's containers hold.
func (p *Plugin) RunPodSandbox(_ context.Context, pod *nriapi.PodSandbox) error {
	p.warmGIDs(pod)
	p.startKubeletLookup(pod)
	return nil
}

// Synchronize (on every connection to the runtime) rebuilds the GID cache
// for the pods that already run.
func (p *Plugin) Synchronize(_ context.Context, pods []*nriapi.PodSandbox, _ []*nriapi.Container) ([]*nriapi.ContainerUpdate, error) {
	p.gids.reset()
	if p.kubelet != nil {
		p.kubelet.reset()
	}
	for _, pod := range pods {
		p.warmGIDs(pod)
		p.startKubeletLookup(pod)
	}
	p.log.Info("synchronized with the runtime", "pods", len(pods))
	return nil, nil
}

// StopPodSandbox comes before the CNI DEL in containerd, so what the pod
// holds is released only if it still holds it after nri.stopGrace.
func (p *Plugin) StopPodSandbox(_ context.Context, pod *nriapi.PodSandbox) error {
	p.forgetSandbox(pod.GetId())
	if len(p.state.SandboxLeases(pod.GetId())) == 0 {
		return nil
	}
	p.scheduleRelease(pod)
	return nil
}

// RemovePodSandbox comes after both CNI DELs: whatever the pod still holds
// is released now.
func (p *Plugin) RemovePodSandbox(ctx context.Context, pod *nriapi.PodSandbox) error {
	p.cancelRelease(pod.GetId())
	p.forgetSandbox(pod.GetId())
	p.release(ctx, pod, "RemovePodSandbox")
	return nil
}

// forgetSandbox drops what was cached for a sandbox's containers.
func (p *Plugin) forgetSandbox(sandbox string) {
	p.gids.forget(sandbox)
	if p.kubelet != nil {
		p.kubelet.forget(sandbox)
	}
}

func (p *Plugin) release(ctx context.Context, pod *nriapi.PodSandbox, why string) {
	held := p.state.SandboxLeases(pod.GetId())
	if len(held) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	ref := pod.GetNamespace() + "/" + pod.GetName()
	if err := p.state.ReleaseSandbox(ctx, pod.GetId()); err != nil {
		p.log.Error("releasing a sandbox's leases failed", "pod", ref, "sandbox", pod.GetId(), "after", why, "err", err)
		return
	}
	p.log.Info("released leases the CNI DEL left behind", "pod", ref, "sandbox", pod.GetId(), "leases", len(held), "after", why)
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
			p.release(context.Background(), pod, "StopPodSandbox")
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
