package nri

import (
	nriapi "github.com/containerd/nri/pkg/api"
)

// autoInjectNICs is gpuAutoInject for a container of a pod without a
// lease: the NICs closest to the GPUs the container was given, in an
// allowed namespace, minus NICs another pod holds in move mode.
func (p *Plugin) autoInjectNICs(pod *nriapi.PodSandbox, ctr *nriapi.Container) []string {
	if !p.cfg.autoNS.allows(pod.GetNamespace()) {
		return nil
	}
	var nics []string
	for _, g := range p.ownedGPUs(pod, ctr) {
		nic, ok := p.affinity.nics[g]
		if !ok {
			continue
		}
		if holder, moved := p.movedElsewhere(pod, nic); moved {
			p.log.Warn("GPU's NIC is moved into another pod: not injected", "container", ctrRef(pod, ctr),
				"gpu", g, "nic", nic, "holder", holder)
			continue
		}
		nics = appendUnique(nics, nic)
	}
	return nics
}

// ownedGPUs is what the runtime (CDI devices) and the kubelet (PodResources)
// say the container was given. The container's own environment
// (NVIDIA_VISIBLE_DEVICES) is not evidence: a pod writes it itself.
func (p *Plugin) ownedGPUs(pod *nriapi.PodSandbox, ctr *nriapi.Container) []int {
	gpus, unknown := p.cdiGPUs(ctr)
	if p.kubelet != nil {
		given, err := p.kubelet.containerGPUs(pod, ctr.GetName())
		if err != nil {
			p.log.Warn("GPUs from the kubelet unknown: none auto-injected from it", "container", ctrRef(pod, ctr), "reason", err)
		}
		gpus = appendGPUs(gpus, given.gpus...)
		unknown = append(unknown, given.unknown...)
	}
	if len(unknown) > 0 {
		p.log.Warn("GPUs the container was given are not found on this node: their NICs are not auto-injected",
			"container", ctrRef(pod, ctr), "unresolved", unknown)
	}
	return gpus
}

// startKubeletLookup asks the kubelet, off the hook, about a starting pod
// that gpuAutoInject may serve.
func (p *Plugin) startKubeletLookup(pod *nriapi.PodSandbox) {
	if p.kubelet == nil || !p.cfg.autoNS.allows(pod.GetNamespace()) {
		return
	}
	if len(p.state.SandboxLeases(pod.GetId())) > 0 {
		return // its leases decide
	}
	p.kubelet.start(pod)
}
