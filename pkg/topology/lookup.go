package topology

import (
	"strconv"
	"strings"
)

// GPUByID finds a GPU by the IDs the kubelet and users hand out: its index
// ("3"), its UUID ("GPU-8f6c…", any case), its PCI address, or a legacy
// MIG device ID "MIG-GPU-<uuid>/<gi>/<ci>", which maps to its parent GPU.
// MIG UUIDs of the newer form ("MIG-<uuid>") name no parent in procfs and
// are not found.
func (m *Machine) GPUByID(id string) (GPU, bool) {
	id = strings.TrimSpace(id)
	if id == "" {
		return GPU{}, false
	}
	if n, err := strconv.Atoi(id); err == nil {
		for _, g := range m.GPUs {
			if g.Index == n {
				return g, true
			}
		}
		return GPU{}, false
	}
	if rest, ok := cutPrefixFold(id, "MIG-GPU-"); ok {
		uuid, _, _ := strings.Cut(rest, "/")
		id = "GPU-" + uuid
	}
	if _, ok := cutPrefixFold(id, "GPU-"); ok {
		for _, g := range m.GPUs {
			if g.UUID != "" && strings.EqualFold(g.UUID, id) {
				return g, true
			}
		}
		return GPU{}, false
	}
	if p := normalizePCI(id); p != "" {
		for _, g := range m.GPUs {
			if g.PCI == p {
				return g, true
			}
		}
	}
	return GPU{}, false
}

// NICByName finds a placement target by name ("mlx5_0", "mlx4_0:2"; see
// TargetName) or by PCI address ("0000:19:00.0" or "19:00.0"), which finds
// the function's first port (NICsByID finds every port).
func (m *Machine) NICByName(nameOrPCI string) (NIC, bool) {
	if nics := m.NICsByID(nameOrPCI); len(nics) > 0 {
		return nics[0], true
	}
	return NIC{}, false
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
