package draplugin

import (
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults of Config.
const (
	DefaultDriverName  = "rail.dev"
	DefaultKubeletDir  = "/var/lib/kubelet"
	DefaultSharedSlots = 8
)

// DownAs says what a port that cannot carry traffic (down, gone from the
// host's view, taken by a pod outside DRA) does in the slice.
type DownAs string

// The values of dra.downAs.
const (
	// DownTaint keeps the device with a NoSchedule taint (DRADeviceTaints);
	// where the API server drops taints the plugin falls back to DownRemove.
	DownTaint DownAs = "taint"
	// DownRemove takes the device out of the slice until it recovers.
	DownRemove DownAs = "remove"
)

// Config is the `dra:` section of raild's configuration.
type Config struct {
	// Enabled runs the kubelet DRA plugin: Rail's NICs published as
	// ResourceSlices, claims prepared and attached at CNI ADD.
	Enabled bool `json:"enabled"`
	// DriverName is the DRA driver name (a DNS subdomain); default rail.dev.
	DriverName string `json:"driverName,omitempty"`
	// KubeletDir is the kubelet's root dir (plugins_registry, plugins/<driver>).
	KubeletDir string `json:"kubeletDir,omitempty"`
	// SharedSlots is how many claims may share one port in a shared mode
	// (the device's consumable capacity rail.dev/slots); default 8.
	SharedSlots int `json:"sharedSlots,omitempty"`
	// SharedBandwidth also publishes a port's rate as the consumable
	// capacity rail.dev/bandwidth (Gbit/s) of its shared device.
	SharedBandwidth bool `json:"sharedBandwidth,omitempty"`
	// ExclusivePorts publishes every port as an exclusive (move) device,
	// even where the node serves macvlan, ipvlan or ipoib.
	ExclusivePorts bool `json:"exclusivePorts,omitempty"`
	// PublishNICsOf are the other DRA drivers whose NICs Rail publishes
	// too; a NIC any other driver publishes on this node is left out.
	PublishNICsOf []string `json:"publishNICsOf,omitempty"`
	// DownAs is taint (default) or remove.
	DownAs DownAs `json:"downAs,omitempty"`
}

// Validate reports the first configuration error, naming the field.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

// settings is the config with defaults applied.
func (c Config) settings() (Config, error) {
	if c.DriverName == "" {
		c.DriverName = DefaultDriverName
	}
	if errs := validation.IsDNS1123Subdomain(c.DriverName); len(errs) > 0 {
		return c, fmt.Errorf("dra.driverName %q: %s (a DNS subdomain such as %q)", c.DriverName, strings.Join(errs, "; "), DefaultDriverName)
	}
	if c.KubeletDir == "" {
		c.KubeletDir = DefaultKubeletDir
	}
	if !filepath.IsAbs(c.KubeletDir) {
		return c, fmt.Errorf("dra.kubeletDir %q: want an absolute path such as %q", c.KubeletDir, DefaultKubeletDir)
	}
	if c.SharedSlots == 0 {
		c.SharedSlots = DefaultSharedSlots
	}
	if c.SharedSlots < 1 || c.SharedSlots > 1024 {
		return c, fmt.Errorf("dra.sharedSlots %d: want 1..1024 (claims sharing one port)", c.SharedSlots)
	}
	switch c.DownAs {
	case "":
		c.DownAs = DownTaint
	case DownTaint, DownRemove:
	default:
		return c, fmt.Errorf("dra.downAs %q: want %q or %q", c.DownAs, DownTaint, DownRemove)
	}
	for i, d := range c.PublishNICsOf {
		if d == c.DriverName {
			return c, fmt.Errorf("dra.publishNICsOf[%d] %q: that is Rail's own driver name", i, d)
		}
	}
	return c, nil
}
