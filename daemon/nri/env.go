package nri

import (
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
)

// envSet is which of the plugin's variables a container sets itself, a
// bit per variable.
type envSet uint8

const (
	hasHCA envSet = 1 << iota
	hasUCX
	hasGIDIndex
	hasPKey
	hasAddrFamily
	hasAddrRange
	hasSocketIf
	hasTopoFile
)

// containerEnv reads which of the plugin's variables env sets.
func containerEnv(env []string) envSet {
	var set envSet
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case envNCCLHCA:
			set |= hasHCA
		case envUCXDevices:
			set |= hasUCX
		case envNCCLGIDIndex:
			set |= hasGIDIndex
		case envNCCLPKey:
			set |= hasPKey
		case envNCCLAddrFamily:
			set |= hasAddrFamily
		case envNCCLAddrRange:
			set |= hasAddrRange
		case envNCCLSocketIf:
			set |= hasSocketIf
		case envNCCLTopoFile:
			set |= hasTopoFile
		}
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
	if pe != nil {
		addIfUnset(adj, has&hasGIDIndex != 0, envNCCLGIDIndex, pe.gidIndex)
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
