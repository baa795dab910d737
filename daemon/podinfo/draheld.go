package podinfo

import (
	"maps"
	"slices"
	"sync"
)

// PodDRANICs is what DRA NIC drivers gave one pod sandbox: the RDMA ports
// of its claims over all its containers, each once, and what the readiness
// checks need to find them in the pod.
type PodDRANICs struct {
	Namespace, Name string
	// UID is the pod's UID (the condition patch's precondition); empty
	// when the runtime did not say.
	UID string
	// Netns is the path of the pod's network namespace (where the driver
	// moved the NICs); empty when the runtime did not say.
	Netns string
	// GPUs are the node's GPU indices the kubelet says the pod's
	// containers hold, each once (doctor).
	GPUs []int
	NICs []DRANIC
}

// DRAHeld is the DRA NICs the node's pods hold now, by sandbox: filled
// when a pod starts (NRI RunPodSandbox, Synchronize; ADD for its own pod)
// and emptied when it stops, as long as the driver holds the NICs. Rail's
// placement never takes such a NIC, and the readiness checks read a pod's
// list. Safe for concurrent use; the zero value is not usable: NewDRAHeld.
type DRAHeld struct {
	mu        sync.RWMutex
	bySandbox map[string]PodDRANICs
}

// NewDRAHeld is an empty table.
func NewDRAHeld() *DRAHeld { return &DRAHeld{bySandbox: map[string]PodDRANICs{}} }

// Set records what a sandbox holds; a pod without DRA NICs is forgotten.
func (h *DRAHeld) Set(sandbox string, pod PodDRANICs) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(pod.NICs) == 0 {
		delete(h.bySandbox, sandbox)
		return
	}
	pod.NICs = slices.Clone(pod.NICs)
	pod.GPUs = slices.Clone(pod.GPUs)
	h.bySandbox[sandbox] = pod
}

// Forget drops a sandbox (it stopped: the driver takes its NICs back).
func (h *DRAHeld) Forget(sandbox string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.bySandbox, sandbox)
}

// Pod is what a sandbox holds: the typed list the readiness checks read.
func (h *DRAHeld) Pod(sandbox string) (PodDRANICs, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	pod, ok := h.bySandbox[sandbox]
	if ok {
		pod.NICs, pod.GPUs = slices.Clone(pod.NICs), slices.Clone(pod.GPUs)
	}
	return pod, ok
}

// Pods is every sandbox's record, copied: the pods the readiness checks
// judge beside the leased ones.
func (h *DRAHeld) Pods() map[string]PodDRANICs {
	out := map[string]PodDRANICs{}
	if h == nil {
		return out
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for sandbox, pod := range h.bySandbox {
		pod.NICs, pod.GPUs = slices.Clone(pod.NICs), slices.Clone(pod.GPUs)
		out[sandbox] = pod
	}
	return out
}

// Range calls fn for every port a sandbox holds (fn must not call h).
func (h *DRAHeld) Range(fn func(sandbox string, pod PodDRANICs, nic DRANIC)) {
	if h == nil {
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for sandbox, pod := range h.bySandbox {
		for _, nic := range pod.NICs {
			fn(sandbox, pod, nic)
		}
	}
}

// UnionNICs is the ports of every container's list, each once, in order.
func UnionNICs(byCtr map[string]Held) []DRANIC {
	var out []DRANIC
	for _, name := range slices.Sorted(maps.Keys(byCtr)) {
		for _, nic := range byCtr[name].NICs {
			if !slices.ContainsFunc(out, func(o DRANIC) bool { return o.NIC == nic.NIC }) {
				out = append(out, nic)
			}
		}
	}
	return out
}

// UnionGPUs is the GPUs of every container's list, each once, in order.
func UnionGPUs(byCtr map[string]Held) []int {
	var out []int
	for _, name := range slices.Sorted(maps.Keys(byCtr)) {
		for _, g := range byCtr[name].GPUs {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

// Retain keeps only the sandboxes keep says are still there (after a
// reconnect to the runtime, pods that stopped meanwhile are dropped).
func (h *DRAHeld) Retain(keep func(sandbox string) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sandbox := range h.bySandbox {
		if !keep(sandbox) {
			delete(h.bySandbox, sandbox)
		}
	}
}
