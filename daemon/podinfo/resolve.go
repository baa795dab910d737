package podinfo

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GPURef is what the resolver needs to know about one GPU of the node.
// The daemon builds it from the topology engine's GPUs.
type GPURef struct {
	Index int    // nvidia-smi order
	PCI   string // 0000:17:00.0
	UUID  string // GPU-5f3c..., empty when unknown
}

// MIGParents names the parent GPU of modern MIG devices: MIG UUID
// ("MIG-<uuid>") to its parent GPU's UUID ("GPU-<uuid>"). The node's DRA
// ResourceSlices are one (DRASlices).
type MIGParents interface {
	MIGParents() map[string]string
}

// Unresolved is a GPU ID (a device-plugin ID, a CDI device name, a DRA
// triple, an annotation's entry) that maps to no GPU of the node, and why;
// Err names the ID.
type Unresolved struct {
	ID  string
	Err error
}

// Resolver maps GPU IDs to the node's GPUs. raild has one per node view
// (GPUSource.Resolver): the IDs a pod names (cni-args, rail.dev/gpus), the
// CDI devices a container is given and the kubelet's device-plugin IDs all
// go through it.
type Resolver struct {
	// GPUs are the GPUs of this node.
	GPUs []GPURef
	// MIG is asked, only when an ID is a modern MIG UUID, for that MIG
	// device's parent. Optional: procfs alone cannot tell a MIG device's
	// parent, so without it (or without an entry) such an ID is an error.
	MIG MIGParents
}

// IDs maps GPU IDs to the indices of the GPUs they are on, each GPU once
// in the order first named, and returns every ID that names no GPU of
// this node with why. Accepted forms:
//
//	"3"                          a GPU index
//	"3:1"                        MIG device 1 of GPU 3 (index strategy)
//	"GPU-<uuid>"                 a GPU UUID (case-insensitive)
//	"MIG-GPU-<uuid>/<gi>/<ci>"   a legacy MIG id: its parent GPU
//	"MIG-<uuid>"                 a MIG UUID, through MIGParents
//	"0000:17:00.0"               a PCI address (also nvidia-smi's 8-digit domain)
//
// with an optional time-slicing replica suffix "::<n>". Lists are split
// before (api.SplitList, which refuses an empty entry); a blank ID here
// is unresolved.
func (r Resolver) IDs(ids []string) ([]int, []Unresolved) {
	var gpus []int
	var failed []Unresolved
	for _, id := range ids {
		index, err := r.resolveOne(id)
		if err != nil {
			failed = append(failed, Unresolved{ID: id, Err: fmt.Errorf("gpu id %q: %w", id, err)})
			continue
		}
		gpus = appendNew(gpus, index)
	}
	return gpus, failed
}

// Resolve is IDs all or nothing: the GPUs in ascending order, or an error
// naming every ID that did not resolve.
func (r Resolver) Resolve(ids []string) ([]int, error) {
	gpus, failed := r.IDs(ids)
	if len(failed) > 0 {
		errs := make([]error, len(failed))
		for i, f := range failed {
			errs[i] = f.Err
		}
		return nil, errors.Join(errs...)
	}
	slices.Sort(gpus)
	return gpus, nil
}

func appendNew(list []int, gpus ...int) []int {
	for _, g := range gpus {
		if !slices.Contains(list, g) {
			list = append(list, g)
		}
	}
	return list
}

func (r Resolver) resolveOne(raw string) (int, error) {
	id := stripReplica(strings.TrimSpace(raw))
	if id == "" {
		return 0, errors.New("empty id; use a GPU index, GPU UUID or PCI address")
	}
	lower := strings.ToLower(id)
	switch {
	case strings.HasPrefix(lower, "mig-gpu-"):
		return r.resolveLegacyMIG(lower)
	case strings.HasPrefix(lower, "mig-"):
		return r.resolveMIGUUID(lower)
	case strings.HasPrefix(lower, "gpu-"):
		return r.byUUID(lower)
	case isDecimal(id):
		return r.byIndexString(id)
	}
	if gpu, mig, ok := strings.Cut(id, ":"); ok && isDecimal(gpu) && isDecimal(mig) {
		return r.byIndexString(gpu)
	}
	if pci, ok := normalizePCI(lower); ok {
		return r.byPCI(pci)
	}
	return 0, errors.New("not a GPU index, GPU UUID (GPU-...), MIG id (MIG-...) or PCI address")
}

// resolveLegacyMIG handles "mig-gpu-<uuid>/<gi>/<ci>" (lower-cased).
func (r Resolver) resolveLegacyMIG(lower string) (int, error) {
	parent, rest, ok := strings.Cut(strings.TrimPrefix(lower, "mig-"), "/")
	if !ok || rest == "" {
		return 0, errors.New("legacy MIG id must be MIG-GPU-<uuid>/<gi>/<ci>")
	}
	return r.byUUID(parent)
}

// resolveMIGUUID handles "mig-<uuid>" (lower-cased) through r.MIG.
func (r Resolver) resolveMIGUUID(lower string) (int, error) {
	var parents map[string]string
	if r.MIG != nil {
		parents = r.MIG.MIGParents()
	}
	for mig, parent := range parents {
		if strings.ToLower(strings.TrimSpace(mig)) == lower {
			return r.byUUID(strings.ToLower(strings.TrimSpace(parent)))
		}
	}
	return 0, errors.New("cannot resolve a MIG UUID to its parent GPU: procfs does not say, and no " +
		"ResourceSlice of this node lists the MIG device with its parentUUID; set the pod annotation " +
		"rail.dev/gpus to the parent GPU's index or UUID, e.g. rail.dev/gpus: \"0\"")
}

func (r Resolver) byUUID(lower string) (int, error) {
	for _, gpu := range r.GPUs {
		if gpu.UUID != "" && strings.ToLower(gpu.UUID) == lower {
			return gpu.Index, nil
		}
	}
	return 0, fmt.Errorf("no GPU with UUID %s on this node (%s)", lower, r.known())
}

func (r Resolver) byIndexString(decimal string) (int, error) {
	index, err := strconv.Atoi(decimal)
	if err != nil {
		return 0, fmt.Errorf("gpu index out of range: %w", err)
	}
	for _, gpu := range r.GPUs {
		if gpu.Index == index {
			return index, nil
		}
	}
	return 0, fmt.Errorf("no GPU with index %d on this node (%s)", index, r.known())
}

func (r Resolver) byPCI(pci string) (int, error) {
	for _, gpu := range r.GPUs {
		if known, ok := normalizePCI(strings.ToLower(gpu.PCI)); ok && known == pci {
			return gpu.Index, nil
		}
	}
	return 0, fmt.Errorf("no GPU at PCI address %s on this node (%s)", pci, r.known())
}

// known describes the node's GPUs for error messages.
func (r Resolver) known() string {
	if len(r.GPUs) == 0 {
		return "no GPUs found"
	}
	indices := make([]string, 0, len(r.GPUs))
	for _, gpu := range r.GPUs {
		indices = append(indices, strconv.Itoa(gpu.Index))
	}
	return "GPU indices: " + strings.Join(indices, ",")
}

// stripReplica drops the NVIDIA device plugin's time-slicing / MPS replica
// suffix: "GPU-abc::2" is GPU-abc.
func stripReplica(id string) string {
	base, _, _ := strings.Cut(id, "::")
	return base
}

func isDecimal(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
