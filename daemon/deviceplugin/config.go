package deviceplugin

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Defaults of Config.
const (
	DefaultDir          = pluginapi.DevicePluginPath
	DefaultResourceName = "rail.dev/rdma"
	DefaultRailPrefix   = "rail.dev/rail"
	DefaultCount        = 100
	DefaultPollInterval = 2 * time.Second
)

// Config is the `devicePlugin:` section of raild's configuration.
type Config struct {
	// Enabled starts the device plugin (raild's --device-plugin).
	Enabled bool `json:"enabled"`
	// Dir holds kubelet.sock and the plugin's own sockets.
	Dir string `json:"dir,omitempty"`
	// ResourceName is the node-wide resource (all RDMA NICs).
	ResourceName string `json:"resourceName,omitempty"`
	// Count is how many containers may hold each resource at once.
	Count int `json:"count,omitempty"`
	// PerRail also registers one resource per rail: RailPrefix+index.
	PerRail    bool   `json:"perRail,omitempty"`
	RailPrefix string `json:"railPrefix,omitempty"`
	// Rails lists the NIC (mlx5_0, or mlx4_0:2 for a port 2) of each rail in rail order; empty:
	// the node's NICs sorted by name.
	Rails []string `json:"rails,omitempty"`
	// UMAD adds the umadN/issmN nodes to Allocate's answer.
	UMAD bool `json:"umad,omitempty"`
	// PollInterval is how often kubelet.sock (re-registration after a
	// kubelet restart) and the plugin's sockets are checked. Health and
	// devices follow the inventory's snapshots, not this poll.
	PollInterval string `json:"pollInterval,omitempty"`
}

// settings is a Config with defaults applied and values parsed.
type settings struct {
	Config
	poll time.Duration
}

// Validate reports the first configuration error, naming the field.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

func (c Config) settings() (settings, error) {
	s := settings{Config: c, poll: DefaultPollInterval}
	if s.Dir == "" {
		s.Dir = DefaultDir
	}
	if !filepath.IsAbs(s.Dir) {
		return settings{}, fmt.Errorf("devicePlugin.dir %q: want an absolute path such as %q", s.Dir, DefaultDir)
	}
	if s.ResourceName == "" {
		s.ResourceName = DefaultResourceName
	}
	if s.RailPrefix == "" {
		s.RailPrefix = DefaultRailPrefix
	}
	if err := checkResourceName(s.ResourceName); err != nil {
		return settings{}, fmt.Errorf("devicePlugin.resourceName: %w", err)
	}
	if err := checkResourceName(s.RailPrefix + "0"); err != nil {
		return settings{}, fmt.Errorf("devicePlugin.railPrefix: %w", err)
	}
	if s.Count == 0 {
		s.Count = DefaultCount
	}
	if s.Count < 0 || s.Count > 100000 {
		return settings{}, fmt.Errorf("devicePlugin.count %d: want 1..100000", s.Count)
	}
	if c.PollInterval != "" {
		d, err := time.ParseDuration(c.PollInterval)
		if err != nil || d <= 0 {
			return settings{}, fmt.Errorf("devicePlugin.pollInterval %q: want a positive duration such as \"2s\"", c.PollInterval)
		}
		s.poll = d
	}
	return s, nil
}

// checkResourceName wants an extended resource name: <domain>/<name>.
func checkResourceName(name string) error {
	domain, res, ok := strings.Cut(name, "/")
	if !ok || domain == "" || res == "" || strings.Contains(res, "/") || !strings.Contains(domain, ".") {
		return fmt.Errorf("%q is not an extended resource name like %q", name, DefaultResourceName)
	}
	if domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") {
		return fmt.Errorf("%q: the kubernetes.io domain is reserved", name)
	}
	return nil
}
