package nri

import (
	"log/slog"
	"slices"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/topology"
)

// gpuAffinity maps GPU indices to the name of their NIC, from the
// topology's node-wide pick (every GPU, no load), and holds the node's GPU
// resolver for that machine, built once per machine so the hook only
// looks things up.
type gpuAffinity struct {
	all      []int
	nics     map[int]string
	resolver podinfo.Resolver
}

func buildGPUAffinity(m *topology.Machine, source *podinfo.GPUSource) *gpuAffinity {
	a := &gpuAffinity{nics: m.Affinity(), resolver: source.Resolver(m)}
	for g, name := range a.nics {
		if nic, ok := m.NICByName(name); ok && nic.NetdevOnly {
			delete(a.nics, g) // no RDMA device to inject: only a pod's own rxe serves it (softRoCE)
		}
	}
	for _, g := range m.GPUs {
		a.all = append(a.all, g.Index)
	}
	return a
}

// logGaps names the GPUs no NIC serves.
func (a *gpuAffinity) logGaps(log *slog.Logger) {
	for _, g := range a.all {
		if _, ok := a.nics[g]; !ok {
			log.Info("GPU has no usable NIC for auto-injection", "gpu", g)
		}
	}
}

// appendGPUs adds GPU indices not yet in the list.
func appendGPUs(list []int, gpus ...int) []int {
	for _, g := range gpus {
		if !slices.Contains(list, g) {
			list = append(list, g)
		}
	}
	return list
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
