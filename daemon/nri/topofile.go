package nri

// topoFileInContainer is where a container finds the node's NCCL topology
// file, bind-mounted read-only, and what NCCL_TOPO_FILE names.
const topoFileInContainer = "/etc/rail/nccl-topo.xml"

// topoFileSource is the node's topology file as the runtime mounts it: a
// path on the host. raild's own path (its topologyFile) is one on the host
// when raild runs there; in a container (the chart) nri.topologyFileOnHost
// names the host's. Empty: no file, or ncclEnv off.
func (s settings) topoFileSource(raildPath string) string {
	if raildPath == "" || !s.ncclEnv {
		return ""
	}
	if s.TopologyFileOnHost != "" {
		return s.TopologyFileOnHost
	}
	return raildPath
}
