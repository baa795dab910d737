package nri

import (
	nriapi "github.com/containerd/nri/pkg/api"
)

// autoInjectNICs is gpuAutoInject for a container of a pod without a
// lease: the NICs closest to the GPUs it was given, in an allowed
// namespace, minus NICs another pod holds in move mode.
func (p *Plugin) autoInjectNICs(call *hookCall) []string {
	if !p.cfg.autoNS.allows(call.pod.GetNamespace()) {
		return nil
	}
	var nics []string
	for _, g := range p.ownedGPUs(call) {
		nic, ok := call.node().gpus.nics[g]
		if !ok {
			continue
		}
		if holder, moved := p.movedElsewhere(call.pod, nic); moved {
			call.log().Warn("GPU's NIC is moved into another pod: not injected", "gpu", g, "nic", nic, "holder", holder)
			continue
		}
		nics = appendUnique(nics, nic)
	}
	return nics
}

// ownedGPUs is what the runtime (CDI devices) and the kubelet (PodResources)
// say the container was given. The container's own environment
// (NVIDIA_VISIBLE_DEVICES) is not evidence: a pod writes it itself.
func (p *Plugin) ownedGPUs(call *hookCall) []int {
	gpus, unknown := p.cdiGPUs(call)
	if p.kubelet != nil {
		given, err := p.kubelet.containerGPUs(call.pod, call.ctr.GetName())
		if err != nil {
			call.log().Warn("GPUs from the kubelet unknown: none auto-injected from it", "error", err)
		}
		gpus = appendGPUs(gpus, given.GPUs...)
		unknown = append(unknown, given.Unresolved...)
	}
	if len(unknown) > 0 {
		why := make([]string, len(unknown))
		for i, u := range unknown {
			why[i] = u.Err.Error()
		}
		call.log().Warn("GPUs the container was given are not found on this node: their NICs are not auto-injected",
			"unresolved", why)
	}
	return gpus
}

// startKubeletLookup asks the kubelet, off the hook, about a starting pod
// that gpuAutoInject may serve, or about every pod when DRA NICs are
// completed (any pod may hold a NIC driver's claim).
func (p *Plugin) startKubeletLookup(pod *nriapi.PodSandbox) {
	if p.kubelet == nil {
		return
	}
	if p.draHeld == nil && (!p.cfg.GPUAutoInject || !p.cfg.autoNS.allows(pod.GetNamespace()) ||
		len(p.state.SandboxLeases(pod.GetId())) > 0) {
		return // not a pod gpuAutoInject serves (its leases decide), and no DRA NICs to look for
	}
	p.kubelet.start(pod)
}
