package inventory

import (
	"maps"
	"reflect"
	"slices"

	"github.com/railcni/rail/pkg/topology"
)

// A NIC's netdev moved into a pod and back (host-device, or raild's own
// attach) changes its port's netdev and state, not its device: the move
// out is taken from the event alone (the netdev marked away, nothing
// read), the move back and the netdev's other changes read that NIC's
// ports alone (topology.Sysfs.ReadNICPorts), and a follow-up reads them
// once more only when the port's GID table was not filled in yet.

// netdevMove is the last thing a burst saw of a NIC's netdev.
type netdevMove struct {
	device string // its RDMA device
	away   bool   // it left the host netns (the kernel named the netns it went to)
}

// applyMoves takes the moves into found: away netdevs are marked so on
// their NICs, the others' NICs have their ports read again. Devices in
// whole are read whole anyway and skipped. It returns found, the netdevs
// away now (netdev -> device; away is not changed), the devices to read
// whole (whole, and those whose NIC is not known or whose port is not
// there: an RDMA device that moved with its netdev), and what the
// follow-up reads again: those devices whole, and the ports of the NICs
// whose GID table is not filled yet. rescanMu is held.
func (inv *Inventory) applyMoves(found *topology.Machine, away map[string]string, moves map[string]netdevMove, whole []string) (
	*topology.Machine, map[string]string, []string, concern) {
	var read []string
	var later concern
	names := slices.Sorted(maps.Keys(moves))
	for _, netdev := range names {
		m := moves[netdev]
		if slices.Contains(whole, m.device) {
			continue
		}
		if m.away && inv.linkHere(netdev) {
			// The event is older than the link's state: the netdev left and
			// is back already (a pod's DEL right after its ADD), and its
			// return's own event may come in a later burst. Its ports are
			// read as they are now.
			m.away = false
		}
		if !m.away {
			if away[netdev] != "" {
				away = cloneWithout(away, netdev)
			}
			if !slices.Contains(read, m.device) {
				read = append(read, m.device)
			}
			continue
		}
		if away[netdev] != m.device {
			away = maps.Clone(away)
			if away == nil {
				away = map[string]string{}
			}
			away[netdev] = m.device
		}
		for _, nic := range found.DeviceNICs(m.device) {
			if !hasNetdev(nic, netdev) {
				continue
			}
			n, problems := nic.Away(netdev)
			found = found.WithNICPorts(n, problems)
		}
	}
	for _, device := range read {
		nics := found.DeviceNICs(device)
		if len(nics) == 0 {
			whole, later.devices = append(whole, device), append(later.devices, device)
			continue
		}
		for _, nic := range nics {
			inv.stats.portReads.Add(1)
			n, problems, gidsReady, ok := inv.sys.ReadNICPorts(nic)
			if !ok {
				whole, later.devices = append(whole, device), append(later.devices, device)
				break
			}
			if !reflect.DeepEqual(n, nic) || !reflect.DeepEqual(problems, found.NICPortProblems(nic)) {
				found = found.WithNICPorts(n, problems)
			}
			if !gidsReady && n.Netdev != "" {
				if later.moves == nil {
					later.moves = map[string]netdevMove{}
				}
				later.moves[n.Netdev] = netdevMove{device: device}
			}
		}
	}
	return found, away, whole, later
}

// hasNetdev says whether one of the NIC's ports names netdev.
func hasNetdev(nic topology.NIC, netdev string) bool {
	return nic.Netdev == netdev || slices.ContainsFunc(nic.Ports, func(p topology.Port) bool { return slices.Contains(p.Netdevs, netdev) })
}

// cloneWithout is a copy of m without key (m itself is a snapshot's).
func cloneWithout(m map[string]string, key string) map[string]string {
	out := maps.Clone(m)
	delete(out, key)
	return out
}

// stillAway keeps the away netdevs whose devices found still shows
// without a netdev on some port: a read of the device that shows the
// netdev again (or another one back in its place, renamed), or shows the
// device gone, ends its absence.
func stillAway(away map[string]string, found *topology.Machine) map[string]string {
	var out map[string]string
	for netdev, device := range away {
		nics := found.DeviceNICs(device)
		lacking := slices.ContainsFunc(nics, func(n topology.NIC) bool {
			return slices.ContainsFunc(n.Ports, func(p topology.Port) bool { return len(p.Netdevs) == 0 })
		})
		if !lacking || slices.ContainsFunc(nics, func(n topology.NIC) bool { return hasNetdev(n, netdev) }) {
			if out == nil {
				out = maps.Clone(away)
			}
			delete(out, netdev)
		}
	}
	if out == nil {
		return away
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// NICsBack reads again, now, the ports of the RDMA devices' NICs whose
// netdevs are away: their pods gave them back (a move-mode lease released
// after the plugin's DEL put the netdev back in the host), and the next
// ADD must not wait for the move's own link event to find them there. A
// device whose netdev is not away reads nothing. It returns the current
// snapshot and whether it is new (see Update).
func (inv *Inventory) NICsBack(cause string, devices []string) (*Snapshot, bool) {
	moves := map[string]netdevMove{}
	for netdev, device := range inv.Current().Away {
		if slices.Contains(devices, device) {
			moves[netdev] = netdevMove{device: device}
		}
	}
	if len(moves) == 0 {
		return inv.Current(), false
	}
	snap, published, _ := inv.updateWithVFs(cause, nil, nil, nil, moves)
	return snap, published
}
