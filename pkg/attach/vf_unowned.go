package attach

import (
	"errors"
	"fmt"
	"net"
	"runtime"
)

// ResetUnowned gives a VF of a PF raild owns, found in the host netns
// with an admin MAC that no lease holds (a pod's that leaked, with no
// label of rail's to restore it from), the kernel's clean state through
// its PF: trust off first (a trusted VF could change what follows), link
// state auto, no rate limits, spoofchk on, no VLAN, then no admin MAC.
// Only the settings that differ are sent, so a driver that lacks one
// (igb: link state, min_tx_rate) is not asked for it. It returns the
// state it found; a VF or PF that is gone needs nothing.
func (h HostVFs) ResetUnowned(pf string, index int) (VFState, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sess, err := openHostSession("")
	if err != nil {
		return VFState{}, err
	}
	defer sess.close()
	return cleanVF(h.a.pfControl(sess), pf, index)
}

// cleanVF is ResetUnowned through pf.
func cleanVF(pf PFControl, name string, index int) (VFState, error) {
	before, err := pf.VFState(name, index)
	if err != nil {
		if gone(err) {
			return before, nil
		}
		return before, fmt.Errorf("read VF %d of PF %s before resetting it: %w", index, name, err)
	}
	rec := &vfRecord{PF: name, Index: index}
	off, on, auto := false, true, VFLinkAuto
	if before.Trust {
		rec.Trust = &off
	}
	if before.LinkState != VFLinkAuto {
		rec.LinkState = &auto
	}
	if before.MinTxRate != 0 || before.MaxTxRate != 0 {
		rec.Rate = &vfRate{}
	}
	if !before.Spoofchk {
		rec.Spoofchk = &on
	}
	if before.VLAN != 0 || before.QoS != 0 {
		rec.VLAN = &vfVLAN{Proto: VLANProto8021Q}
	}
	err = resetVFThrough(pf, rec)
	if len(before.MAC) > 0 && !isZeroMAC(before.MAC) {
		if e := pf.SetVFMAC(name, index, make(net.HardwareAddr, 6)); e != nil {
			err = errors.Join(err, fmt.Errorf("clear the admin mac of VF %d of PF %s: %w", index, name, e))
		}
	}
	return before, err
}
