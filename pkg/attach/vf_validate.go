package attach

import (
	"fmt"

	"github.com/railcni/rail/pkg/api"
)

// validateVF checks Spec.VF: present exactly in vf mode, and each setting
// in the range the kernel and the 802.1Q standard allow.
func validateVF(s Spec) error {
	switch {
	case s.Mode != ModeVF && s.VF != nil:
		return fmt.Errorf("VF is only for mode %q, not %q: leave it empty", ModeVF, s.Mode)
	case s.Mode != ModeVF:
		return nil
	case s.VF == nil:
		return fmt.Errorf("mode %q needs VF (the VF's PF and index)", ModeVF)
	}
	v := s.VF
	if err := checkIfName(v.PF); err != nil {
		return fmt.Errorf("field VF.PF: %w", err)
	}
	if v.Index < 0 || v.Index > 65535 {
		return fmt.Errorf("field VF.Index %d is out of range: a VF index is 0-65535", v.Index)
	}
	if v.GUID != nil {
		if err := api.CheckGUID(v.GUID); err != nil {
			return fmt.Errorf("field VF.GUID: %w", err)
		}
	}
	return v.Config.Validate()
}
