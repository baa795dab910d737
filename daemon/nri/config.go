package nri

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultSocket      = "/var/run/nri/nri.sock"
	DefaultPluginName  = "rail"
	DefaultPluginIndex = "10"
	DefaultMemlock     = "unlimited"
	DefaultStopGrace   = 30 * time.Second
)

// rlimInfinity is RLIM_INFINITY as the OCI spec carries it.
const rlimInfinity = ^uint64(0)

// Config is the `nri:` section of raild's configuration.
type Config struct {
	// Enabled starts the NRI plugin.
	Enabled bool `json:"enabled"`
	// Socket is containerd's (or CRI-O's) NRI socket.
	Socket string `json:"socket,omitempty"`
	// PluginName and PluginIndex identify the plugin to the runtime; the
	// index (two digits) orders it among other plugins.
	PluginName  string `json:"pluginName,omitempty"`
	PluginIndex string `json:"pluginIndex,omitempty"`
	// Memlock is the RLIMIT_MEMLOCK given to containers that get RDMA
	// devices: "unlimited", a byte count ("8388608") or a binary size ("8Mi").
	Memlock string `json:"memlock,omitempty"`
	// NCCLEnv sets the NCCL/UCX variables (docs/environment.md) the
	// container does not set itself, and mounts the node's topology file.
	// Default on; off turns every one of them off.
	NCCLEnv *bool `json:"ncclEnv,omitempty"`
	// TopologyFileOnHost is raild's topologyFile as a path on the node, for
	// the runtime to bind-mount into containers when raild itself runs in a
	// container that sees the file elsewhere (the chart). Empty: raild's
	// own path.
	TopologyFileOnHost string `json:"topologyFileOnHost,omitempty"`
	// UMAD also injects the umadN and issmN nodes of each port.
	UMAD bool `json:"umad,omitempty"`
	// GPUAutoInject gives a container of a pod without a lease the nodes of
	// the NICs closest to the GPUs it was given: by the kubelet (PodResources
	// device IDs of the GPU resources) or by the runtime (CDI devices of
	// GPUCDIKinds). Never from the container's own environment.
	GPUAutoInject bool `json:"gpuAutoInject,omitempty"`
	// GPUAutoInjectNamespaces are the pod namespaces gpuAutoInject serves
	// ("*": all). Required when gpuAutoInject is on.
	GPUAutoInjectNamespaces []string `json:"gpuAutoInjectNamespaces,omitempty"`
	// GPUCDIKinds are the CDI device kinds ("vendor/class") whose devices
	// are GPUs. Default: nvidia.com/gpu and k8s.device-plugin.nvidia.com/gpu.
	GPUCDIKinds []string `json:"gpuCDIKinds,omitempty"`
	// AnnotationNamespaces are the pod namespaces where the rail.dev/devices
	// annotation is honoured ("*": all). Empty: none.
	AnnotationNamespaces []string `json:"annotationNamespaces,omitempty"`
	// StopGrace is how long after StopPodSandbox the plugin waits for the
	// CNI DEL (which containerd runs after the NRI stop event) before it
	// releases what the sandbox still holds. Default "30s".
	StopGrace string `json:"stopGrace,omitempty"`
}

// Default GPU CDI kinds: NVIDIA's CDI specs (nvidia-ctk) and NVIDIA's
// device plugin in its CDI modes.
const (
	CDIKindNVIDIA             = "nvidia.com/gpu"
	CDIKindNVIDIADevicePlugin = "k8s.device-plugin.nvidia.com/gpu"
)

// settings is a Config with defaults applied and values parsed.
type settings struct {
	Config
	memlock     uint64
	ncclEnv     bool
	stopGrace   time.Duration
	annotatedNS namespaces
	autoNS      namespaces
	cdiKinds    map[string]bool
}

// Validate checks the section as New does, for raild to refuse a bad
// configuration when it loads it.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

func (c Config) settings() (settings, error) {
	s := settings{Config: c, ncclEnv: true, stopGrace: DefaultStopGrace}
	if s.Socket == "" {
		s.Socket = DefaultSocket
	}
	if s.PluginName == "" {
		s.PluginName = DefaultPluginName
	}
	if s.PluginIndex == "" {
		s.PluginIndex = DefaultPluginIndex
	}
	if !validIndex(s.PluginIndex) {
		return settings{}, fmt.Errorf("nri.pluginIndex %q: want two digits, e.g. %q", s.PluginIndex, DefaultPluginIndex)
	}
	if strings.ContainsAny(s.PluginName, "/ ") {
		return settings{}, fmt.Errorf("nri.pluginName %q: must not contain '/' or spaces", s.PluginName)
	}
	if s.Memlock == "" {
		s.Memlock = DefaultMemlock
	}
	limit, err := ParseMemlock(s.Memlock)
	if err != nil {
		return settings{}, fmt.Errorf("nri.memlock: %w", err)
	}
	s.memlock = limit
	if c.NCCLEnv != nil {
		s.ncclEnv = *c.NCCLEnv
	}
	if c.TopologyFileOnHost != "" && (!filepath.IsAbs(c.TopologyFileOnHost) || filepath.Clean(c.TopologyFileOnHost) != c.TopologyFileOnHost) {
		return settings{}, fmt.Errorf("nri.topologyFileOnHost %q: want a clean absolute path on the node, e.g. %q",
			c.TopologyFileOnHost, "/opt/microsoft/ndv5-topo.xml")
	}
	if c.StopGrace != "" {
		d, err := time.ParseDuration(c.StopGrace)
		if err != nil || d < 0 {
			return settings{}, fmt.Errorf("nri.stopGrace %q: want a non-negative duration such as \"30s\"", c.StopGrace)
		}
		s.stopGrace = d
	}
	s.annotatedNS = newNamespaces(c.AnnotationNamespaces)
	s.autoNS = newNamespaces(c.GPUAutoInjectNamespaces)
	if c.GPUAutoInject && len(c.GPUAutoInjectNamespaces) == 0 {
		return settings{}, errors.New("nri.gpuAutoInjectNamespaces is empty while nri.gpuAutoInject is on: " +
			"list the namespaces whose GPU pods get their NICs' device nodes, or \"*\" for all")
	}
	kinds, err := cdiKinds(c.GPUCDIKinds)
	if err != nil {
		return settings{}, err
	}
	s.cdiKinds = kinds
	return s, nil
}

// cdiKinds checks the configured CDI kinds, or gives the defaults.
func cdiKinds(list []string) (map[string]bool, error) {
	if len(list) == 0 {
		list = []string{CDIKindNVIDIA, CDIKindNVIDIADevicePlugin}
	}
	kinds := make(map[string]bool, len(list))
	for i, kind := range list {
		vendor, class, ok := strings.Cut(kind, "/")
		if !ok || vendor == "" || class == "" || strings.ContainsAny(class, "/=") || strings.Contains(vendor, "=") {
			return nil, fmt.Errorf("nri.gpuCDIKinds[%d] %q: want a CDI kind \"vendor/class\", e.g. %q", i, kind, CDIKindNVIDIA)
		}
		kinds[kind] = true
	}
	return kinds, nil
}

// namespaces is a namespace allow-list; "*" allows all.
type namespaces struct {
	any   bool
	names map[string]bool
}

func newNamespaces(list []string) namespaces {
	n := namespaces{names: make(map[string]bool, len(list))}
	for _, ns := range list {
		n.any = n.any || ns == "*"
		n.names[ns] = true
	}
	return n
}

func (n namespaces) allows(ns string) bool { return n.any || n.names[ns] }

func validIndex(idx string) bool {
	return len(idx) == 2 && idx[0] >= '0' && idx[0] <= '9' && idx[1] >= '0' && idx[1] <= '9'
}

// ParseMemlock turns "unlimited", "8388608" or "8Mi" into an RLIMIT_MEMLOCK
// value in bytes; "unlimited" is RLIM_INFINITY.
func ParseMemlock(v string) (uint64, error) {
	orig := v
	v = strings.TrimSpace(v)
	if v == "unlimited" || v == "infinity" {
		return rlimInfinity, nil
	}
	shift := uint(0)
	for i, suffix := range []string{"Ki", "Mi", "Gi", "Ti"} {
		if strings.HasSuffix(v, suffix) {
			shift = uint(10 * (i + 1))
			v = strings.TrimSuffix(v, suffix)
			break
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not \"unlimited\", a byte count or a count with Ki/Mi/Gi/Ti (e.g. \"8Mi\")", orig)
	}
	if n > rlimInfinity>>shift {
		return 0, fmt.Errorf("%q overflows 64 bits; use \"unlimited\"", orig)
	}
	return n << shift, nil
}
