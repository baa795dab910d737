package nri

import (
	"log/slog"
	"strings"

	"github.com/railcni/rail/pkg/topology"
)

// visibleDevicesEnv is how the NVIDIA container toolkit names a
// container's GPUs.
const visibleDevicesEnv = "NVIDIA_VISIBLE_DEVICES"

// gpuAffinity maps GPU indices to the name of their NIC, from the
// topology's node-wide pick (every GPU, no load), built once so the hook
// only looks things up.
type gpuAffinity struct {
	all  []int
	nics map[int]string
}

func buildGPUAffinity(m *topology.Machine, log *slog.Logger) *gpuAffinity {
	a := &gpuAffinity{nics: m.Affinity()}
	for _, g := range m.GPUs {
		a.all = append(a.all, g.Index)
		if _, ok := a.nics[g.Index]; !ok {
			log.Info("GPU has no usable NIC for auto-injection", "gpu", g.Index)
		}
	}
	return a
}

// nicsFor returns the NICs of the GPUs named in a container's environment.
func (a *gpuAffinity) nicsFor(m *topology.Machine, env []string) (nics []string, unknown []string) {
	value, ok := lastEnv(env, visibleDevicesEnv)
	if !ok {
		return nil, nil
	}
	gpus, unknown := parseVisibleDevices(m, a.all, value)
	for _, g := range gpus {
		if n, ok := a.nics[g]; ok {
			nics = appendUnique(nics, n)
		}
	}
	return nics, unknown
}

// parseVisibleDevices turns an NVIDIA_VISIBLE_DEVICES value into GPU
// indices: "all"; "none", "void" and "" name no GPU; otherwise a
// comma-separated list of indices, "N:M" MIG indices, GPU UUIDs and MIG
// UUIDs (MIG devices count as their parent GPU). Entries that name no GPU
// of this node are returned as unknown.
func parseVisibleDevices(m *topology.Machine, all []int, value string) (gpus []int, unknown []string) {
	switch strings.TrimSpace(value) {
	case "", "none", "void":
		return nil, nil
	case "all":
		return all, nil
	}
	for _, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		idx, ok := resolveGPU(m, entry)
		if !ok {
			unknown = append(unknown, entry)
			continue
		}
		if !containsInt(gpus, idx) {
			gpus = append(gpus, idx)
		}
	}
	return gpus, unknown
}

// resolveGPU maps one entry to a GPU index. "N:M" (MIG device M of GPU
// N) counts as GPU N; the topology resolves indices, GPU UUIDs and legacy
// MIG IDs ("MIG-GPU-<uuid>/<gi>/<ci>").
func resolveGPU(m *topology.Machine, entry string) (int, bool) {
	if parent, _, isMIG := strings.Cut(entry, ":"); isMIG {
		entry = parent
	}
	g, ok := m.GPUByID(entry)
	if !ok {
		return 0, false
	}
	return g.Index, true
}

// lastEnv returns the value of the last KEY=value entry for key.
func lastEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key); ok && strings.HasPrefix(v, "=") {
			return v[1:], true
		}
	}
	return "", false
}

func appendUnique(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

func containsInt(list []int, n int) bool {
	for _, v := range list {
		if v == n {
			return true
		}
	}
	return false
}
