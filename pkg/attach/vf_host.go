package attach

import (
	"fmt"
	"net"
	"runtime"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"golang.org/x/sys/unix"
)

// ReturnedVF is a VF the kernel handed back to the host from a pod netns
// that died without DEL: its netdev still carries rail's label, and with
// it the pod's PF-side settings.
type ReturnedVF struct {
	PF     string // the PF's netdev
	Index  int    // the VF's index on it
	Netdev string // the netdev's name as found (the pod's name, or devN)
	Host   string // its host name, restored by the reset
	Owner  Owner  // the lease it belonged to, as the label says
	// Err is why the reset failed (nil: reset, renamed, label cleared);
	// a VF that failed keeps its label for the next try.
	Err error
}

// HostVFs is what raild does with VFs in its own (the host) netns: reset
// the VFs that came back from dead pods, and read VFs' admin MACs.
type HostVFs struct {
	a attacher
}

// NewHostVFsAt works through netlink in the calling thread's netns, and
// through sysfs at /sys under root (an InfiniBand VF's rebind; raild's
// --root). An empty root is /.
func NewHostVFsAt(root string) HostVFs {
	a := defaultAttacher()
	a.sysRoot = root
	return HostVFs{a: a}
}

// ResetReturned resets every VF in the host netns that still carries
// rail's label, except those skip names (a VF a lease holds: the DEL or
// ADD that owns it does the reset): its PF-side settings to what the label
// recorded (trust first), then its host name, MTU, MAC and state, as DEL
// does. Each VF found is returned with the outcome of its reset.
func (h HostVFs) ResetReturned(skip func(pf string, index int) bool) ([]ReturnedVF, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sess, err := openHostSession("")
	if err != nil {
		return nil, err
	}
	defer sess.close()
	links, err := sess.hostNL.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list host links: %w", err)
	}
	var out []ReturnedVF
	for _, l := range links {
		rec, ok := parseAlias(l.Attrs().Alias)
		if !ok || rec.VF == nil || skip(rec.VF.PF, rec.VF.Index) {
			continue
		}
		r := ReturnedVF{PF: rec.VF.PF, Index: rec.VF.Index, Netdev: l.Attrs().Name, Host: rec.Host, Owner: rec.Owner}
		r.Err = h.a.restoreHostLink(sess, l, rec)
		out = append(out, r)
	}
	return out, nil
}

// AdminMACs reads the admin MAC of each VF of the PF whose netdev is pf,
// by VF index, as the PF reports them (IFLA_VF_INFO).
func (h HostVFs) AdminMACs(pf string) (map[int]net.HardwareAddr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	nl, err := netlinksafe.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("open netlink: %w", err)
	}
	defer nl.Close()
	link, err := netlinkPF{h: nl}.link(pf)
	if err != nil {
		return nil, err
	}
	macs := map[int]net.HardwareAddr{}
	for _, vf := range link.Attrs().Vfs {
		macs[vf.ID] = vf.Mac
	}
	return macs, nil
}
