package vfpf

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/api"
)

// Settings are the PF-side settings of a VF that steps changed, each the
// value it had before (nil: not changed, never restored).
type Settings struct {
	VLAN      *VLAN
	Spoofchk  *bool
	Trust     *bool
	LinkState *api.VFLinkState
	Rate      *Rate
}

// VLAN is a VF's VLAN, QoS and VLAN protocol.
type VLAN struct {
	VLAN, QoS int
	Proto     uint16
}

// Rate is a VF's minimum and maximum transmit rate, in Mbps (0: none).
type Rate struct{ Min, Max uint32 }

// Step is one setting through the PF and its inverse.
type Step struct {
	Setting string // as the kernel's ip link names it
	Do      func() error
	Undo    func() error
}

// Steps are the settings cfg asks for, its MAC and GUIDs aside, in the
// order they are to be set: VLAN/QoS/protocol, spoofchk, link state,
// rates, trust last (run in reverse, trust is undone first). before is
// the VF's state now; the Settings returned hold, for each step, the
// value it had before, for Reset.
func Steps(pf Control, vf VF, before State, cfg api.VFConfig) ([]Step, Settings) {
	var steps []Step
	var rec Settings
	if cfg.VLAN != nil {
		old := VLAN{VLAN: before.VLAN, QoS: before.QoS, Proto: before.VLANProto}
		rec.VLAN = &old
		steps = append(steps, Step{"vlan",
			func() error { return pf.SetVFVLAN(vf.PF, vf.Index, *cfg.VLAN, cfg.QoS, vlanProto(cfg.VLANProto)) },
			func() error { return pf.SetVFVLAN(vf.PF, vf.Index, old.VLAN, old.QoS, vlanProto(old.Proto)) }})
	}
	if cfg.Spoofchk != nil {
		old := before.Spoofchk
		rec.Spoofchk = &old
		steps = append(steps, Step{"spoofchk",
			func() error { return pf.SetVFSpoofchk(vf.PF, vf.Index, *cfg.Spoofchk) },
			func() error { return pf.SetVFSpoofchk(vf.PF, vf.Index, old) }})
	}
	if cfg.LinkState != nil {
		old := before.LinkState
		rec.LinkState = &old
		steps = append(steps, Step{"link_state",
			func() error { return pf.SetVFLinkState(vf.PF, vf.Index, *cfg.LinkState) },
			func() error { return pf.SetVFLinkState(vf.PF, vf.Index, old) }})
	}
	if cfg.MinTxRate != nil || cfg.MaxTxRate != nil {
		old := Rate{Min: before.MinTxRate, Max: before.MaxTxRate}
		want := old
		if cfg.MinTxRate != nil {
			want.Min = *cfg.MinTxRate
		}
		if cfg.MaxTxRate != nil {
			want.Max = *cfg.MaxTxRate
		}
		rec.Rate = &old
		steps = append(steps, Step{"min_tx_rate/max_tx_rate",
			func() error { return pf.SetVFRate(vf.PF, vf.Index, want.Min, want.Max) },
			func() error { return pf.SetVFRate(vf.PF, vf.Index, old.Min, old.Max) }})
	}
	if cfg.Trust != nil {
		old := before.Trust
		rec.Trust = &old
		steps = append(steps, Step{"trust",
			func() error { return pf.SetVFTrust(vf.PF, vf.Index, *cfg.Trust) },
			func() error { return pf.SetVFTrust(vf.PF, vf.Index, old) }})
	}
	return steps, rec
}

// Reset restores, through pf, every setting rec holds, trust first (a
// trusted VF could otherwise still change what is being restored), then
// link state, rates, spoofchk, VLAN. A PF or VF that is gone has nothing
// left to reset. It reads the PF only when a setting fails (Gone): the
// read's reply carries every VF's state and stats, which costs the PF
// driver more than the settings themselves.
func Reset(pf Control, vf VF, rec Settings) error {
	steps := []struct {
		set     bool
		setting string
		call    func() error
	}{
		{rec.Trust != nil, "trust", func() error { return pf.SetVFTrust(vf.PF, vf.Index, *rec.Trust) }},
		{rec.LinkState != nil, "link_state", func() error { return pf.SetVFLinkState(vf.PF, vf.Index, *rec.LinkState) }},
		{rec.Rate != nil, "min_tx_rate/max_tx_rate", func() error { return pf.SetVFRate(vf.PF, vf.Index, rec.Rate.Min, rec.Rate.Max) }},
		{rec.Spoofchk != nil, "spoofchk", func() error { return pf.SetVFSpoofchk(vf.PF, vf.Index, *rec.Spoofchk) }},
		{rec.VLAN != nil, "vlan", func() error {
			return pf.SetVFVLAN(vf.PF, vf.Index, rec.VLAN.VLAN, rec.VLAN.QoS, vlanProto(rec.VLAN.Proto))
		}},
	}
	var errs []error
	for _, st := range steps {
		if !st.set {
			continue
		}
		if err := st.call(); err != nil {
			if Gone(pf, vf, err) {
				return nil // nothing left to reset
			}
			errs = append(errs, fmt.Errorf("reset %s of VF %d of PF %s: %w", st.setting, vf.Index, vf.PF, err))
		}
	}
	return errors.Join(errs...)
}

// Clean gives a VF the kernel's clean state through its PF: trust off
// first (a trusted VF could change what follows), link state auto, no
// rate limits, spoofchk on, no VLAN, then no admin MAC. Only the
// settings that differ are sent, so a driver that lacks one (igb: link
// state, min_tx_rate) is not asked for it. It returns the state it
// found; a VF or PF that is gone needs nothing.
func Clean(pf Control, vf VF) (State, error) {
	before, err := pf.VFState(vf.PF, vf.Index)
	if err != nil {
		if IsGone(err) {
			return before, nil
		}
		return before, fmt.Errorf("read VF %d of PF %s before resetting it: %w", vf.Index, vf.PF, err)
	}
	var rec Settings
	off, on, auto := false, true, api.VFLinkAuto
	if before.Trust {
		rec.Trust = &off
	}
	if before.LinkState != api.VFLinkAuto {
		rec.LinkState = &auto
	}
	if before.MinTxRate != 0 || before.MaxTxRate != 0 {
		rec.Rate = &Rate{}
	}
	if !before.Spoofchk {
		rec.Spoofchk = &on
	}
	if before.VLAN != 0 || before.QoS != 0 {
		rec.VLAN = &VLAN{Proto: api.VLANProto8021Q}
	}
	err = Reset(pf, vf, rec)
	if len(before.MAC) > 0 && !IsZeroMAC(before.MAC) {
		if e := pf.SetVFMAC(vf.PF, vf.Index, make(net.HardwareAddr, 6)); e != nil {
			err = errors.Join(err, fmt.Errorf("clear the admin mac of VF %d of PF %s: %w", vf.Index, vf.PF, e))
		}
	}
	return before, err
}

// Gone reports whether a PF call's failure means the VF has nothing left
// to reset: the PF or the VF is gone, as the error says or as the PF,
// read again only then, says (a driver answers a setting of a VF that is
// no more with EINVAL).
func Gone(pf Control, vf VF, err error) bool {
	if IsGone(err) {
		return true
	}
	_, rerr := pf.VFState(vf.PF, vf.Index)
	return rerr != nil && IsGone(rerr)
}

// IsGone reports whether a call failed because the PF, the VF or its
// netdev no longer exists.
func IsGone(err error) bool {
	var notFound netlink.LinkNotFoundError
	return errors.Is(err, ErrNotOnPF) || errors.As(err, &notFound) || errors.Is(err, unix.ENOENT) ||
		errors.Is(err, unix.ESRCH) || errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.ENODEV)
}

// vlanProto is the VLAN protocol to set: 802.1Q when none is given.
func vlanProto(p uint16) uint16 {
	if p == 0 {
		return api.VLANProto8021Q
	}
	return p
}

// IsZeroMAC reports whether mac is all zeroes (no admin MAC).
func IsZeroMAC(mac net.HardwareAddr) bool {
	for _, b := range mac {
		if b != 0 {
			return false
		}
	}
	return true
}
