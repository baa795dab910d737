package attach

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
)

// configureVF sets what s.VF.Config asks through the VF's PF, before the
// VF's netdev (hostLink, still in the host) moves: the admin MAC (and the
// same MAC on the netdev), VLAN/QoS/protocol, spoofchk, link state, rates,
// trust, then an InfiniBand VF's GUIDs, whose rebind gives the VF a new
// netdev (under the old one's name, MTU and state), returned (nil when
// there was no rebind). It returns the record of what each changed setting was
// before; each step pushes its inverse on undo, so trust is undone first.
func (a attacher) configureVF(sess *session, hostLink netlink.Link, s Spec, undo *undoList) (*vfRecord, netlink.Link, error) {
	pf, v, c := a.pfControl(sess), s.VF, s.VF.Config
	before, err := pf.VFState(v.PF, v.Index)
	if err != nil {
		return nil, nil, fmt.Errorf("read VF %d of PF %s: %w", v.Index, v.PF, err)
	}
	rec := &vfRecord{PF: v.PF, Index: v.Index}
	what := func(setting string) string { return fmt.Sprintf("%s of VF %d of PF %s", setting, v.Index, v.PF) }
	set := func(setting string, do, restore func() error) error {
		if err := do(); err != nil {
			return fmt.Errorf("set %s through the PF: %w", what(setting), err)
		}
		undo.push(what(setting), restore)
		return nil
	}
	if c.MAC != nil {
		if err := a.setVFMAC(sess, hostLink, s, before, rec, undo); err != nil {
			return nil, nil, err
		}
	}
	if c.VLAN != nil {
		old := vfVLAN{VLAN: before.VLAN, QoS: before.QoS, Proto: before.VLANProto}
		rec.VLAN = &old
		err := set("vlan", func() error { return pf.SetVFVLAN(v.PF, v.Index, *c.VLAN, c.QoS, vlanProto(c.VLANProto)) },
			func() error { return pf.SetVFVLAN(v.PF, v.Index, old.VLAN, old.QoS, vlanProto(old.Proto)) })
		if err != nil {
			return nil, nil, err
		}
	}
	if c.Spoofchk != nil {
		old := before.Spoofchk
		rec.Spoofchk = &old
		if err := set("spoofchk", func() error { return pf.SetVFSpoofchk(v.PF, v.Index, *c.Spoofchk) },
			func() error { return pf.SetVFSpoofchk(v.PF, v.Index, old) }); err != nil {
			return nil, nil, err
		}
	}
	if c.LinkState != nil {
		old := before.LinkState
		rec.LinkState = &old
		if err := set("link_state", func() error { return pf.SetVFLinkState(v.PF, v.Index, *c.LinkState) },
			func() error { return pf.SetVFLinkState(v.PF, v.Index, old) }); err != nil {
			return nil, nil, err
		}
	}
	if c.MinTxRate != nil || c.MaxTxRate != nil {
		old := vfRate{Min: before.MinTxRate, Max: before.MaxTxRate}
		want := old
		if c.MinTxRate != nil {
			want.Min = *c.MinTxRate
		}
		if c.MaxTxRate != nil {
			want.Max = *c.MaxTxRate
		}
		rec.Rate = &old
		if err := set("min_tx_rate/max_tx_rate", func() error { return pf.SetVFRate(v.PF, v.Index, want.Min, want.Max) },
			func() error { return pf.SetVFRate(v.PF, v.Index, old.Min, old.Max) }); err != nil {
			return nil, nil, err
		}
	}
	if c.Trust != nil {
		old := before.Trust
		rec.Trust = &old
		if err := set("trust", func() error { return pf.SetVFTrust(v.PF, v.Index, *c.Trust) },
			func() error { return pf.SetVFTrust(v.PF, v.Index, old) }); err != nil {
			return nil, nil, err
		}
	}
	if v.GUID != nil {
		rebound, err := a.setVFGUIDs(sess, hostLink, s, before, rec, undo)
		return rec, rebound, err
	}
	return rec, nil, nil
}

// resetVF restores, through the PF, every setting rec says attach
// changed but the MACs, trust first (a trusted VF could otherwise still
// change what is being restored), then link state, rates, spoofchk, VLAN.
// The MACs follow once the netdev is back in the host (restoreVFMAC). A
// PF or VF that is gone has nothing left to reset.
func (a attacher) resetVF(sess *session, rec *vfRecord) error {
	return resetVFThrough(a.pfControl(sess), rec)
}

// resetVFThrough is resetVF through pf. It reads the PF only when a
// setting fails (vfGone): the read's reply carries every VF's state and
// stats, which costs the PF driver more than the settings themselves.
func resetVFThrough(pf PFControl, rec *vfRecord) error {
	steps := []struct {
		set     bool
		setting string
		call    func() error
	}{
		{rec.Trust != nil, "trust", func() error { return pf.SetVFTrust(rec.PF, rec.Index, *rec.Trust) }},
		{rec.LinkState != nil, "link_state", func() error { return pf.SetVFLinkState(rec.PF, rec.Index, *rec.LinkState) }},
		{rec.Rate != nil, "min_tx_rate/max_tx_rate", func() error { return pf.SetVFRate(rec.PF, rec.Index, rec.Rate.Min, rec.Rate.Max) }},
		{rec.Spoofchk != nil, "spoofchk", func() error { return pf.SetVFSpoofchk(rec.PF, rec.Index, *rec.Spoofchk) }},
		{rec.VLAN != nil, "vlan", func() error {
			return pf.SetVFVLAN(rec.PF, rec.Index, rec.VLAN.VLAN, rec.VLAN.QoS, vlanProto(rec.VLAN.Proto))
		}},
	}
	var errs []error
	for _, st := range steps {
		if !st.set {
			continue
		}
		if err := st.call(); err != nil {
			if vfGone(pf, rec, err) {
				return nil // nothing left to reset
			}
			errs = append(errs, fmt.Errorf("reset %s of VF %d of PF %s: %w", st.setting, rec.Index, rec.PF, err))
		}
	}
	return errors.Join(errs...)
}

// vfGone reports whether a PF call's failure means the VF has nothing
// left to reset: the PF or the VF is gone, as the error says or as the
// PF, read again only then, says (a driver answers a setting of a VF that
// is no more with EINVAL).
func vfGone(pf PFControl, rec *vfRecord, err error) bool {
	if gone(err) {
		return true
	}
	_, rerr := pf.VFState(rec.PF, rec.Index)
	return rerr != nil && gone(rerr)
}

// gone reports whether a PF call failed because the PF or the VF no
// longer exists.
func gone(err error) bool {
	var notFound netlink.LinkNotFoundError
	return errors.Is(err, ErrVFNotOnPF) || errors.As(err, &notFound) || ignoreGone(err) == nil
}

func vlanProto(p uint16) uint16 {
	if p == 0 {
		return VLANProto8021Q
	}
	return p
}

func macOrZero(mac net.HardwareAddr) net.HardwareAddr {
	if len(mac) == 0 {
		return make(net.HardwareAddr, 6)
	}
	return append(net.HardwareAddr(nil), mac...)
}
