package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/api"
)

// checkGPUSettings defaults gpuDRADrivers and checks it and each pool's
// unresolvedGPUs.
func (c *Config) checkGPUSettings() error {
	if len(c.GPUDRADrivers) == 0 {
		c.GPUDRADrivers = []string{podinfo.DefaultDRADriver}
	}
	var errs []error
	for i, d := range c.GPUDRADrivers {
		if d == "" || strings.ContainsAny(d, "/ ") {
			errs = append(errs, fmt.Errorf("gpuDRADrivers[%d] %q: want a DRA driver name such as %q", i, d, podinfo.DefaultDRADriver))
		}
	}
	for i, p := range c.Pools {
		if err := api.CheckUnresolvedGPUs(p.UnresolvedGPUs); err != nil {
			errs = append(errs, fmt.Errorf("pools[%d].unresolvedGPUs %w (pool %q)", i, err, p.Name))
		}
	}
	return errors.Join(errs...)
}
