package attach

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/vfpf"
)

// configureVF sets what s.VF.Config asks through the VF's PF, before the
// VF's netdev (hostLink, still in the host) moves: the admin MAC (and the
// same MAC on the netdev), then vfpf's steps (VLAN/QoS/protocol,
// spoofchk, link state, rates, trust), then an InfiniBand VF's GUIDs,
// whose rebind gives the VF a new netdev (under the old one's name, MTU
// and state), returned (nil when there was no rebind). It returns the
// record of what each changed setting was before; each step pushes its
// inverse on undo, so trust is undone first.
func (a attacher) configureVF(sess *session, hostLink netlink.Link, s Spec, undo *undoList) (*vfRecord, netlink.Link, error) {
	pf, v := a.pfControl(sess), s.VF
	before, err := pf.VFState(v.PF, v.Index)
	if err != nil {
		return nil, nil, fmt.Errorf("read VF %d of PF %s: %w", v.Index, v.PF, err)
	}
	rec := &vfRecord{PF: v.PF, Index: v.Index}
	if v.Config.MAC != nil {
		if err := a.setVFMAC(sess, hostLink, s, before, rec, undo); err != nil {
			return nil, nil, err
		}
	}
	var steps []vfpf.Step
	steps, rec.Settings = vfpf.Steps(pf, rec.place(), before, v.Config)
	for _, st := range steps {
		what := fmt.Sprintf("%s of VF %d of PF %s", st.Setting, v.Index, v.PF)
		if err := st.Do(); err != nil {
			return nil, nil, fmt.Errorf("set %s through the PF: %w", what, err)
		}
		undo.push(what, st.Undo)
	}
	if v.GUID != nil {
		rebound, err := a.setVFGUIDs(sess, hostLink, s, before, rec, undo)
		return rec, rebound, err
	}
	return rec, nil, nil
}

// resetVF restores, through the PF, every setting rec says attach
// changed but the MACs (vfpf.Reset: trust first). The MACs follow once
// the netdev is back in the host (restoreVFMAC). A PF or VF that is gone
// has nothing left to reset.
func (a attacher) resetVF(sess *session, rec *vfRecord) error {
	return vfpf.Reset(a.pfControl(sess), rec.place(), rec.Settings)
}

func macOrZero(mac net.HardwareAddr) net.HardwareAddr {
	if len(mac) == 0 {
		return make(net.HardwareAddr, 6)
	}
	return append(net.HardwareAddr(nil), mac...)
}
