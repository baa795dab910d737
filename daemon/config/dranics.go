package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/railcni/rail/daemon/podinfo"
)

// checkDRANICDrivers defaults draNICDrivers (absent: DRANet's driver; an
// explicit empty list stays empty: off) and checks each name, which must
// not also be a GPU driver. Call it after checkGPUSettings.
func (c *Config) checkDRANICDrivers() error {
	if c.DRANICDrivers == nil {
		c.DRANICDrivers = []string{podinfo.DefaultDRANICDriver}
	}
	var errs []error
	for i, d := range c.DRANICDrivers {
		switch {
		case d == "" || strings.ContainsAny(d, "/ "):
			errs = append(errs, fmt.Errorf("draNICDrivers[%d] %q: want a DRA driver name such as %q (or draNICDrivers: [] to turn it off)",
				i, d, podinfo.DefaultDRANICDriver))
		case slices.Contains(c.GPUDRADrivers, d):
			errs = append(errs, fmt.Errorf("draNICDrivers[%d] %q is also in gpuDRADrivers: a driver's devices are GPUs or NICs, not both; "+
				"remove it from one of the lists", i, d))
		}
	}
	return errors.Join(errs...)
}
