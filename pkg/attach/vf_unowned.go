package attach

import (
	"runtime"

	"github.com/railcni/rail/pkg/vfpf"
)

// ResetUnowned gives a VF of a PF raild owns, found in the host netns
// with an admin MAC that no lease holds (a pod's that leaked, with no
// label of rail's to restore it from), the kernel's clean state through
// its PF: trust off first (a trusted VF could change what follows), link
// state auto, no rate limits, spoofchk on, no VLAN, then no admin MAC.
// Only the settings that differ are sent, so a driver that lacks one
// (igb: link state, min_tx_rate) is not asked for it. It returns the
// state it found; a VF or PF that is gone needs nothing.
func (h HostVFs) ResetUnowned(pf string, index int) (vfpf.State, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sess, err := openHostSession("")
	if err != nil {
		return vfpf.State{}, err
	}
	defer sess.close()
	return vfpf.Clean(h.a.pfControl(sess), vfpf.VF{PF: pf, Index: index})
}
