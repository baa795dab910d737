package config

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/railcni/rail/daemon/sriov"
	"github.com/railcni/rail/pkg/api"
)

// checkPoolVFs checks each pool's VF settings (vf mode's sriov-cni keys),
// naming pools[i].<key> and the fix.
func (c *Config) checkPoolVFs() error {
	var errs []error
	for i, p := range c.Pools {
		if _, err := sriov.PoolVF(p); err != nil {
			errs = append(errs, fmt.Errorf("pools[%d].%w (pool %q's VF settings in vf mode)", i, err, p.Name))
		}
	}
	return errors.Join(errs...)
}

// poolMACKey matches a pool's mac key, which pools do not have.
var poolMACKey = regexp.MustCompile(`^pools\[\d+\]\.mac$`)

// explainPoolMAC says why a pool's mac is refused: it would give every
// VF of the pool one MAC.
func explainPoolMAC(err error) error {
	var keyErr *api.KeyError
	if errors.As(err, &keyErr) && poolMACKey.MatchString(keyErr.Path) {
		return fmt.Errorf("%w: a pool sets no mac (its VFs would all share it); each VF gets its lease's own, or the netconf's mac", err)
	}
	return err
}
