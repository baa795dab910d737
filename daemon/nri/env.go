package nri

import (
	"slices"
	"strings"

	nriapi "github.com/containerd/nri/pkg/api"
)

// The variables the plugin may set (docs/environment.md says when and
// why). It never overrides one the container sets itself.
const (
	envNCCLHCA        = "NCCL_IB_HCA"
	envUCXDevices     = "UCX_NET_DEVICES"
	envNCCLGIDIndex   = "NCCL_IB_GID_INDEX"
	envNCCLPKey       = "NCCL_IB_PKEY"
	envNCCLAddrFamily = "NCCL_IB_ADDR_FAMILY"
	envNCCLAddrRange  = "NCCL_IB_ADDR_RANGE"
	envNCCLSocketIf   = "NCCL_SOCKET_IFNAME"
	envNCCLTopoFile   = "NCCL_TOPO_FILE"
	// The engines beside NCCL: UCX (NIXL, vLLM, Dynamo) and Mooncake take
	// the same GID index; Mooncake's auto-discovery is narrowed to the
	// pod's devices.
	envUCXGIDIndex = "UCX_IB_GID_INDEX"
	envMCGIDIndex  = "MC_GID_INDEX"
	envMCFilters   = "MC_MS_FILTERS"
	// envUCXDGIDCheck turns off UCX's UD check of a packet's destination
	// GID, which drops rxe's RoCE v2 packets (softRoCE nodes only; see
	// docs/environment.md).
	envUCXDGIDCheck = "UCX_UD_ETH_DGID_CHECK"
)

// envSet is which of the plugin's variables a container sets itself, a
// bit per variable.
type envSet uint16

const (
	hasHCA envSet = 1 << iota
	hasUCX
	hasGIDIndex
	hasPKey
	hasAddrFamily
	hasAddrRange
	hasSocketIf
	hasTopoFile
	hasUCXGIDIndex
	hasMCGIDIndex
	hasMCFilters
	hasUCXDGIDCheck
)

// containerEnv reads which of the plugin's variables env sets.
func containerEnv(env []string) envSet {
	var set envSet
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set |= envBit(k)
	}
	return set
}

// addEnv sets the variables the container does not set itself: the NICs
// it was given (NCCL_IB_HCA, UCX_NET_DEVICES), what its pod's leases give
// (pe, nil without a lease) and the node's topology file.
func (p *Plugin) addEnv(call *hookCall, adj *nriapi.ContainerAdjustment, nics []*nicDevices, pe *podEnv) {
	if len(nics) == 0 {
		return
	}
	has := containerEnv(call.ctr.GetEnv())
	if has&hasHCA == 0 {
		names := make([]string, len(nics))
		for i, n := range nics {
			names[i] = n.hca
		}
		adj.AddEnv(envNCCLHCA, "="+strings.Join(names, ","))
	}
	if has&hasUCX == 0 {
		var ucx []string
		for _, n := range nics {
			if n.ucx != "" {
				ucx = append(ucx, n.ucx)
			}
		}
		if len(ucx) > 0 {
			adj.AddEnv(envUCXDevices, strings.Join(ucx, ","))
		}
	}
	// Mooncake's filter follows NCCL_IB_HCA: a container that picks its
	// NCCL devices itself gets no device list from rail for Mooncake
	// either, which could contradict its choice.
	if has&(hasMCFilters|hasHCA) == 0 {
		adj.AddEnv(envMCFilters, mooncakeFilters(nics))
	}
	if pe != nil {
		addIfUnset(adj, has&hasGIDIndex != 0, envNCCLGIDIndex, pe.gidIndex)
		// The engines' GID index is NCCL's, set only where rail sets
		// NCCL's: a container that chose its own NCCL index gets none.
		addIfUnset(adj, has&(hasUCXGIDIndex|hasGIDIndex) != 0, envUCXGIDIndex, pe.gidIndex)
		addIfUnset(adj, has&(hasMCGIDIndex|hasGIDIndex) != 0, envMCGIDIndex, pe.gidIndex)
		if pe.softRoCE {
			addIfUnset(adj, has&hasUCXDGIDCheck != 0, envUCXDGIDCheck, "n")
		}
		addIfUnset(adj, has&hasPKey != 0, envNCCLPKey, pe.pkeyIndex)
		// NCCL reads the range in the family's syntax: the two go together,
		// and a container that sets either gets neither.
		pair := has&(hasAddrFamily|hasAddrRange) != 0
		addIfUnset(adj, pair, envNCCLAddrFamily, pe.addrFamily)
		addIfUnset(adj, pair, envNCCLAddrRange, pe.addrRange)
		addIfUnset(adj, has&hasSocketIf != 0, envNCCLSocketIf, pe.socketIf)
	}
	if p.topoFile != "" && has&hasTopoFile == 0 && !mountsAt(call.ctr, topoFileInContainer) {
		adj.AddMount(&nriapi.Mount{Source: p.topoFile, Destination: topoFileInContainer, Type: "bind",
			Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
		adj.AddEnv(envNCCLTopoFile, topoFileInContainer)
	}
}

// envBit is the bit of one of the plugin's variables (0 for another).
func envBit(key string) envSet {
	switch key {
	case envNCCLHCA:
		return hasHCA
	case envUCXDevices:
		return hasUCX
	case envNCCLGIDIndex:
		return hasGIDIndex
	case envNCCLPKey:
		return hasPKey
	case envNCCLAddrFamily:
		return hasAddrFamily
	case envNCCLAddrRange:
		return hasAddrRange
	case envNCCLSocketIf:
		return hasSocketIf
	case envNCCLTopoFile:
		return hasTopoFile
	case envUCXGIDIndex:
		return hasUCXGIDIndex
	case envMCGIDIndex:
		return hasMCGIDIndex
	case envMCFilters:
		return hasMCFilters
	case envUCXDGIDCheck:
		return hasUCXDGIDCheck
	}
	return 0
}

// mooncakeFilters is MC_MS_FILTERS: the RDMA devices of the container's
// NICs (Mooncake filters devices, not ports), each once, in order.
func mooncakeFilters(nics []*nicDevices) string {
	var devs []string
	for _, n := range nics {
		if !slices.Contains(devs, n.device) {
			devs = append(devs, n.device)
		}
	}
	return strings.Join(devs, ",")
}

func addIfUnset(adj *nriapi.ContainerAdjustment, set bool, key, value string) {
	if !set && value != "" {
		adj.AddEnv(key, value)
	}
}

// mountsAt is true when the container already has a mount at dst.
func mountsAt(ctr *nriapi.Container, dst string) bool {
	for _, m := range ctr.GetMounts() {
		if m.GetDestination() == dst {
			return true
		}
	}
	return false
}
