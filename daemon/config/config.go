// Package config reads raild's YAML configuration. Command-line flags
// override it; see docs/configuration.md for every key.
package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/railcni/rail/daemon/cniconf"
	"github.com/railcni/rail/daemon/deviceplugin"
	"github.com/railcni/rail/daemon/draplugin"
	"github.com/railcni/rail/daemon/inputfile"
	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/sriov"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// Defaults for the daemon.
const (
	DefaultStateDir           = "/var/lib/rail"
	DefaultNetnsDir           = "/var/run/netns"
	DefaultPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"
	DefaultGPUResource        = "nvidia.com/gpu"
	DefaultCooldown           = 30 * time.Second
)

// Rails says which rail index each NIC carries.
type Rails struct {
	// NICs maps an RDMA device name or PCI address to its rail index.
	NICs map[string]int `json:"nics,omitempty"`
	// FromAffinity numbers the NICs in the order of the node's affinity
	// (GPU 0's NIC is rail 0, ...). It is the default when NICs is empty.
	FromAffinity *bool `json:"fromAffinity,omitempty"`
}

// Config is the whole file.
type Config struct {
	NodeName string `json:"nodeName,omitempty"`
	Root     string `json:"root,omitempty"`
	// TopologyFile is the node's NCCL topology file (NCCL_TOPO_FILE
	// format): its distances win over sysfs for the pairs it names.
	TopologyFile string `json:"topologyFile,omitempty"`
	Socket       string `json:"socket,omitempty"`
	StateDir     string `json:"stateDir,omitempty"`
	// NetnsDir is where the runtime keeps the pods' netns: raild looks
	// there for its pods when it starts without a lease store, and
	// `raild recover` rebuilds the store from them.
	NetnsDir           string   `json:"netnsDir,omitempty"`
	PodResourcesSocket string   `json:"podResourcesSocket,omitempty"`
	MetricsAddr        string   `json:"metricsAddr,omitempty"`
	GPUResources       []string `json:"gpuResources,omitempty"`
	// GPUDRADrivers are the DRA drivers whose devices are GPUs.
	GPUDRADrivers []string `json:"gpuDRADrivers,omitempty"`
	// DRANICDrivers are the DRA NIC drivers whose RDMA NICs raild
	// completes (memlock, NCCL/UCX env) without moving them; absent:
	// [dra.net]; an empty list turns it off (see docs/dra.md).
	DRANICDrivers []string            `json:"draNICDrivers,omitempty"`
	AttachPolicy  api.AttachPolicy    `json:"attachPolicy,omitempty"`
	Cooldown      string              `json:"cooldown,omitempty"`
	Rails         Rails               `json:"rails,omitempty"`
	Pools         []ipam.PoolConfig   `json:"pools"`
	NRI           nri.Config          `json:"nri,omitempty"`
	DevicePlugin  deviceplugin.Config `json:"devicePlugin,omitempty"`
	// DRA makes raild a DRA driver of its own (docs/dra.md): the node's
	// NICs published as ResourceSlices, claims attached at CNI ADD.
	DRA        draplugin.Config `json:"dra,omitempty"`
	CNI        cniconf.Config   `json:"cni,omitempty"`
	Kubernetes Kubernetes       `json:"kubernetes,omitempty"`
	// SRIOV enables VFs at start on PFs that have none (default: off,
	// raild uses the VFs the node has).
	SRIOV     sriov.Config `json:"sriov,omitempty"`
	Readiness Readiness    `json:"readiness,omitempty"`
	// NICs are the NICs rail may place on this node (RDMA names or PCI
	// addresses; empty: every NIC); Modes the attach modes it may serve
	// (empty: every mode). Node classes set them per kind of node.
	NICs  []string   `json:"nics,omitempty"`
	Modes []api.Mode `json:"modes,omitempty"`
	// AllowProtectedNICs are the node's own NICs (its address, routes,
	// bond) rail may still share with pods in child modes (macvlan,
	// ipoib), by RDMA name or PCI address. They are never moved.
	AllowProtectedNICs []string `json:"allowProtectedNICs,omitempty"`
	// SoftRoCE puts the node in Soft-RoCE mode (nodes without RDMA
	// hardware): after an interface reaches a pod, rail creates an rxe on
	// it inside the pod's netns, and that rxe is the pod's RDMA device
	// (docs/configuration.md, "Soft-RoCE nodes"). Off by default.
	SoftRoCE bool `json:"softRoCE,omitempty"`
	// NodeClasses override the keys above (and rails, attachPolicy, the
	// pools' NIC binding) on the nodes their nodeSelector matches.
	NodeClasses []NodeClass `json:"nodeClasses,omitempty"`

	CooldownDuration time.Duration `json:"-"`
	// NodeClass is the class ApplyNodeClass chose ("" none).
	NodeClass string `json:"-"`
}

// maxConfigFile bounds raild's config file (a large node's is a few KiB).
const maxConfigFile = 4 << 20

// Load reads and validates a config file; an empty path gives the defaults.
func Load(path string) (*Config, error) {
	cfg := &Config{}
	if path != "" {
		data, err := inputfile.Read(path, maxConfigFile)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		asJSON, err := yaml.YAMLToJSON(data)
		if err == nil {
			err = explainPoolMAC(api.DecodeStrict(asJSON, cfg))
		}
		if err != nil {
			return nil, fmt.Errorf("config %s: %w (see docs/configuration.md for the keys)", path, err)
		}
	}
	return cfg, nil
}

// Finish applies defaults after flags were applied, and validates.
func (c *Config) Finish() error {
	if c.Root == "" {
		c.Root = "/"
	}
	if c.Socket == "" {
		c.Socket = "/run/rail/raild.sock"
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir
	}
	if c.NetnsDir == "" {
		c.NetnsDir = DefaultNetnsDir
	}
	if c.NodeName == "" {
		c.NodeName = os.Getenv("NODE_NAME")
	}
	if len(c.GPUResources) == 0 {
		c.GPUResources = []string{DefaultGPUResource}
	}
	var errs []error
	if c.AttachPolicy == "" {
		c.AttachPolicy = api.PolicyGPUOrAnnotated
	}
	if !c.AttachPolicy.Valid() {
		errs = append(errs, fmt.Errorf("attachPolicy %q: want one of %v (which pods get rail interfaces when rail is chained)",
			c.AttachPolicy, api.AttachPolicies()))
	}
	c.CooldownDuration = DefaultCooldown
	if c.Cooldown != "" {
		d, err := time.ParseDuration(c.Cooldown)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("cooldown %q: want a duration such as \"30s\" (0 reuses addresses at once)", c.Cooldown))
		}
		c.CooldownDuration = d
	}
	if !strings.HasPrefix(c.Socket, "/") {
		errs = append(errs, fmt.Errorf("socket %q: want an absolute path", c.Socket))
	}
	errs = append(errs, checkRails("rails", c.Rails), checkModes("modes", c.Modes), checkNICList("nics", c.NICs),
		checkNICList("allowProtectedNICs", c.AllowProtectedNICs))
	errs = append(errs, c.CNI.Finish(), c.NRI.Validate(), c.DevicePlugin.Validate(), c.SRIOV.Validate(), c.checkNodeName(), c.checkPoolDistances(), c.checkPoolVFs(), c.checkGPUSettings(),
		c.checkDRANICDrivers(), c.checkDRA(), c.Kubernetes.finish(os.Getenv), c.checkKubeNode(), c.checkNodeClasses(), c.Readiness.finish(),
		c.finishMetricsAddr())
	return errors.Join(errs...)
}

// checkNodeName refuses an empty node name when a pool is sliced by node:
// raild could not pick its slice and would serve a pool of size 0.
func (c *Config) checkNodeName() error {
	if c.NodeName != "" {
		return nil
	}
	for i, p := range c.Pools {
		if len(p.Nodes) > 0 {
			return fmt.Errorf("nodeName: empty, but pools[%d] %q is sliced by node (nodes:): set nodeName in the config, "+
				"--node-name, or $NODE_NAME (in the DaemonSet from fieldRef spec.nodeName)", i, p.Name)
		}
	}
	return nil
}

// checkKubeNode refuses the API connection without a node name: the pod
// informer watches this node's pods only.
func (c *Config) checkKubeNode() error {
	if !c.Kubernetes.On || c.NodeName != "" {
		return nil
	}
	return fmt.Errorf("nodeName: empty, but the API connection is on (kubernetes.enabled %q): set nodeName, --node-name "+
		"or $NODE_NAME (in the DaemonSet from fieldRef spec.nodeName), or set kubernetes.enabled: false", c.Kubernetes.Enabled)
}

// checkDRA checks the dra section; the driver needs the API connection
// (its slices, the claims) and so a node name.
func (c *Config) checkDRA() error {
	if !c.DRA.Enabled {
		return nil
	}
	if err := c.DRA.Validate(); err != nil {
		return err
	}
	if c.Kubernetes.Enabled == "false" {
		return errors.New("dra.enabled: true needs the API connection: kubernetes.enabled is false")
	}
	for _, d := range append(slices.Clone(c.GPUDRADrivers), c.DRANICDrivers...) {
		if d == c.DRA.DriverName || (c.DRA.DriverName == "" && d == draplugin.DefaultDriverName) {
			return fmt.Errorf("dra.driverName %q is also in gpuDRADrivers or draNICDrivers: Rail's own driver is neither", d)
		}
	}
	return nil
}

// UseAffinityRails reports whether rails follow the node's affinity order.
func (c *Config) UseAffinityRails() bool {
	if c.Rails.FromAffinity != nil {
		return *c.Rails.FromAffinity
	}
	return len(c.Rails.NICs) == 0
}

// checkPoolDistances checks each pool's maxDistance names a class.
func (c *Config) checkPoolDistances() error {
	var errs []error
	for i, p := range c.Pools {
		if p.MaxDistance == "" {
			continue
		}
		if _, err := topology.ParseClass(p.MaxDistance); err != nil {
			errs = append(errs, fmt.Errorf("pools[%d].maxDistance %q: use PIX, PXB, PHB, P2C, NODE or SYS (the farthest GPU-to-NIC class a pod may get from pool %q), or leave it out for any",
				i, p.MaxDistance, p.Name))
		}
	}
	return errors.Join(errs...)
}
