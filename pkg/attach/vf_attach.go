package attach

import (
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/vfnetdev"
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
	node := a.vfNode(sess)
	if v.Config.MAC != nil {
		var mac vfnetdev.Step
		mac, rec.MACs = node.MACStep(rec.place(), hostLink, v.Config.MAC, before)
		if _, err := a.runVFStep(mac, v, undo); err != nil {
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
	if v.GUID == nil {
		return rec, nil, nil
	}
	guid, was, err := node.GUIDStep(rec.place(), hostLink, v.GUID, before)
	if err != nil {
		return rec, nil, err
	}
	rebound, err := a.runVFStep(guid, v, undo)
	if err != nil {
		return rec, nil, err
	}
	rec.GUIDs = was
	return rec, rebound, nil
}

// runVFStep runs one of vfnetdev's steps on v and pushes its inverse on
// undo; it returns the VF's netdev when the step replaced it.
func (a attacher) runVFStep(st vfnetdev.Step, v *VF, undo *undoList) (netlink.Link, error) {
	link, err := st.Do()
	if err != nil {
		return nil, err
	}
	undo.push(fmt.Sprintf("%s of VF %d of PF %s", st.Setting, v.Index, v.PF), st.Undo)
	return link, nil
}

// resetVF restores, through the PF, every setting rec says attach
// changed but the MACs (vfpf.Reset: trust first). The MACs follow once
// the netdev is back in the host (vfnetdev's RestoreMAC). A PF or VF that is gone
// has nothing left to reset.
func (a attacher) resetVF(sess *session, rec *vfRecord) error {
	return vfpf.Reset(a.pfControl(sess), rec.place(), rec.Settings)
}
