package topology

import (
	"slices"
	"strconv"
	"strings"
)

// The live part of one NIC read again alone: what a NIC's netdev leaving
// the host netns or coming back changes (its port's state, netdev and the
// netdev's links), not what a move cannot change (PCI place, NUMA, GUID,
// char devices), which DiscoverDevice reads.

// ReadNICPorts reads a known NIC's ports again as DiscoverDevice reads
// them — state, physical state, link layer, rate, netdevs, the netdev's
// links — and keeps the rest of its record; its char devices stay those
// of the record. It returns the NIC, the problems of its ports, and
// gidsReady: false for a RoCE port whose netdev is on the host but whose
// GID table has no entry yet (the kernel fills it in after the netdev
// returns, with no event of its own). ok is false when the device or one
// of its ports is not there: read the device whole then.
func (s *Sysfs) ReadNICPorts(nic NIC) (out NIC, problems []Problem, gidsReady, ok bool) {
	device := deviceOf(nic)
	if !validName(device) || len(nic.Ports) == 0 {
		return NIC{}, nil, false, false
	}
	dir := ibClassDir + "/" + device
	d := &discovery{fs: s.fs, cpus: s.cpus}
	dev := NIC{Name: device, Virtual: nic.Virtual}
	out, gidsReady = nic, true
	out.Ports = slices.Clone(nic.Ports)
	devDir := lazyDir{fs: s.fs, link: dir + "/device", none: nic.PCI == ""}
	for i, old := range nic.Ports {
		pd := dir + "/ports/" + strconv.Itoa(old.Num)
		if !s.fs.exists(pd) {
			return NIC{}, nil, false, false
		}
		p := d.portWith(&dev, dir, devDir.get, old.Num, nic.DevicePorts > 1, charDevs{})
		p.Umad, p.Issm = old.Umad, old.Issm
		out.Ports[i] = p
		if p.LinkLayer == Ethernet && len(p.Netdevs) > 0 && !s.fs.exists(pd+"/gid_attrs/ndevs/0") {
			gidsReady = false
		}
	}
	p := out.Ports[0] // a NIC is one port of its device (target)
	out.State, out.LinkLayer, out.Rate, out.Netdev = p.State, p.LinkLayer, p.Rate, ""
	if len(p.Netdevs) > 0 {
		out.Netdev = p.Netdevs[0]
	}
	out.Links = d.netdevLinks(out.Netdev)
	out.Bond = strings.HasPrefix(device, "mlx5_bond_") ||
		(out.Netdev != "" && s.fs.exists("/sys/class/net/"+out.Netdev+"/bonding"))
	return out, d.problems, gidsReady, true
}

// Away is the NIC as the host shows it once its netdev named netdev left
// the host netns (moved into a pod): that netdev gone from its ports, no
// netdev links, and its ports' problems as DiscoverDevice reports them
// (their state as last read, a port left without a netdev). Nothing is
// read: nothing else of it changed.
func (nic NIC) Away(netdev string) (NIC, []Problem) {
	out := nic
	out.Ports = slices.Clone(nic.Ports)
	var problems []Problem
	device := deviceOf(nic)
	for i, p := range out.Ports {
		p.Netdevs = slices.DeleteFunc(slices.Clone(p.Netdevs), func(n string) bool { return n == netdev })
		if reason := p.stateProblem(); reason != "" {
			problems = append(problems, Problem{Device: device, Reason: reason})
		}
		if len(p.Netdevs) == 0 {
			problems = append(problems, Problem{Device: device, Reason: "port " + strconv.Itoa(p.Num) + " has no netdev"})
		}
		out.Ports[i] = p
	}
	if out.Netdev == netdev {
		out.Netdev, out.Links, out.Bond = "", nil, strings.HasPrefix(device, "mlx5_bond_")
		if len(out.Ports) > 0 && len(out.Ports[0].Netdevs) > 0 {
			out.Netdev = out.Ports[0].Netdevs[0]
		}
	}
	return out, problems
}

// WithNICPorts is a copy of the machine with one NIC (by name) replaced
// by what ReadNICPorts read or Away made of it, and the problems of its
// ports replaced by problems; its device's other problems are kept.
func (m *Machine) WithNICPorts(nic NIC, problems []Problem) *Machine {
	nics := slices.Clone(m.NICs)
	for i := range nics {
		if nics[i].Name == nic.Name {
			nics[i] = nic
		}
	}
	device := deviceOf(nic)
	kept := slices.DeleteFunc(slices.Clone(m.Problems), func(p Problem) bool {
		return p.Device == device && slices.ContainsFunc(nic.Ports, func(port Port) bool { return portProblem(p.Reason, port.Num) })
	})
	return m.WithNICs(nics, append(kept, problems...))
}

// portProblem says whether a problem's reason is one port's: its state,
// its missing netdev, or one of its files unreadable.
func portProblem(reason string, num int) bool {
	n := strconv.Itoa(num)
	return strings.HasPrefix(reason, "port "+n+" ") || strings.Contains(reason, "/ports/"+n+"/")
}

// lazyDir resolves a device's PCI function directory only when asked: a
// RoCE port names its netdev through its GID table and needs none.
type lazyDir struct {
	fs       *fsys
	link     string
	none     bool // no PCI function (a software device): DiscoverDevice has none
	resolved bool
	dir      string
}

func (l *lazyDir) get() string {
	if !l.resolved && !l.none {
		l.resolved = true
		l.dir, _ = l.fs.real(l.link)
	}
	return l.dir
}

// NICPortProblems are the machine's problems about the NIC's ports (see
// WithNICPorts).
func (m *Machine) NICPortProblems(nic NIC) []Problem {
	device := deviceOf(nic)
	var out []Problem
	for _, p := range m.Problems {
		if p.Device == device && slices.ContainsFunc(nic.Ports, func(port Port) bool { return portProblem(p.Reason, port.Num) }) {
			out = append(out, p)
		}
	}
	return out
}
