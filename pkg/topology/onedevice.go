package topology

import (
	"errors"
	"os"
	"slices"
	"strings"
)

// Sysfs is one root opened for lookups repeated while the machine runs:
// one RDMA device read again, or whether a netdev could be a NIC's, with
// no other part of the node read.
type Sysfs struct {
	fs   *fsys
	cpus cpuNodes // read once: which CPUs each NUMA node holds
	// netdevNICs: netdev-only NICs count (Options.NetdevNICs), looked up
	// by their netdev where a device name is asked for.
	netdevNICs bool
}

// OpenSysfs opens root ("/" for this host); it fails only when root holds
// no sys directory.
func OpenSysfs(root string) (*Sysfs, error) {
	fs, err := newFsys(root)
	if err != nil {
		return nil, err
	}
	d := &discovery{fs: fs}
	return &Sysfs{fs: fs, cpus: d.readCPUNodes()}, nil
}

// WithNetdevNICs is the same root where netdev-only NICs count (on) or
// not, as Discover reads them with Options.NetdevNICs: DiscoverDevice
// reads a name that is no RDMA device as a netdev, and NetdevRDMADevices
// names such a netdev as its own device.
func (s *Sysfs) WithNetdevNICs(on bool) *Sysfs {
	out := *s
	out.netdevNICs = on
	return &out
}

// DiscoverDevice reads one RDMA device as Discover reads each: its NICs
// (one per port; none when /sys/class/infiniband/<device> is gone) and the
// problems found on the way. Its char devices are looked up below the
// device's own sysfs directory, where the kernel registers them, and in
// the whole classes only when they are not there.
func (s *Sysfs) DiscoverDevice(device string) ([]NIC, []Problem) {
	if !validName(device) || IsPodSoftRoCE(device) {
		return nil, nil
	}
	d := &discovery{fs: s.fs, cpus: s.cpus}
	dir := ibClassDir + "/" + device
	if !s.fs.isLink(dir) && !s.fs.exists(dir) {
		if s.netdevNICs {
			return s.netdevNICsOf(device), nil // a netdev-only NIC's netdev, or gone
		}
		return nil, nil // gone: Discover does not list it
	}
	nics := d.nic(device, d.deviceCharDevs(device))
	return nics, d.problems
}

// deviceCharDevs finds the char devices of one RDMA device: the uverbs and
// umad/issm devices registered below its parent (its PCI function or
// auxiliary device; /sys/devices/virtual for a software device), each
// read through its class entry as Discover reads it. When its uverbs
// device is not found so, the whole classes are read, as Discover does.
// Problems of other devices' char devices are left out.
func (d *discovery) deviceCharDevs(device string) charDevs {
	base := "/sys/devices/virtual"
	if parent, err := d.fs.real(ibClassDir + "/" + device + "/device"); err == nil {
		base = parent
	}
	cd := charDevs{verbs: map[string]*CharDev{}, mad: map[madKey]madDevs{}}
	own := &discovery{fs: d.fs}
	for _, name := range own.classNames(base+"/infiniband_verbs", "uverbs") {
		dir := verbsClassDir + "/" + name
		if owner, err := d.fs.read(dir + "/ibdev"); err != nil || owner != device {
			continue
		}
		if owner, dev, ok := own.ownedCharDev(dir, name); ok {
			cd.verbs[owner] = dev
		}
	}
	if _, found := cd.verbs[device]; !found {
		whole := &discovery{fs: d.fs}
		return whole.scanCharDevs()
	}
	for _, prefix := range []string{"umad", "issm"} {
		for _, name := range own.classNames(base+"/infiniband_mad", prefix) {
			dir := madClassDir + "/" + name
			if owner, err := d.fs.read(dir + "/ibdev"); err == nil && owner == device {
				own.addMad(cd.mad, dir, name, prefix == "issm")
			}
		}
	}
	return cd
}

// NetdevRDMADevices says whether a host netdev could be a NIC's: it has a
// `device` link in /sys/class/net/<netdev> (a PCI function, VF or
// sub-function, unlike a veth, bridge or macvlan), and which RDMA devices
// that device has registered (its infiniband/ directory), in natural
// order. A netdev that is not there (gone, or in another netns) is none.
func (s *Sysfs) NetdevRDMADevices(netdev string) (devices []string, nic bool) {
	if !validName(netdev) {
		return nil, false
	}
	dev := "/sys/class/net/" + netdev + "/device"
	if !s.fs.exists(dev) {
		return nil, false
	}
	names, err := s.fs.names(dev + "/infiniband")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, true
	}
	if len(names) == 0 && s.netdevNICs && len(s.netdevNICsOf(netdev)) > 0 {
		return []string{netdev}, true // a netdev-only NIC is its own device
	}
	sortNatural(names)
	return names, true
}

// validName is a single path element: a netdev or device name, never a
// way out of its class directory.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// DeviceNICs are the machine's NICs of one RDMA device, in port order.
func (m *Machine) DeviceNICs(device string) []NIC {
	var out []NIC
	for _, nic := range m.NICs {
		if deviceOf(nic) == device {
			out = append(out, nic)
		}
	}
	return out
}

// DeviceProblems are the machine's problems about one RDMA device.
func (m *Machine) DeviceProblems(device string) []Problem {
	var out []Problem
	for _, p := range m.Problems {
		if p.Device == device {
			out = append(out, p)
		}
	}
	return out
}

// WithDevice is a copy of the machine with one RDMA device's NICs and
// problems replaced by what DiscoverDevice read (none: the device is
// gone), in the order Discover gives (see WithNICs). The machine itself
// is not changed.
func (m *Machine) WithDevice(device string, nics []NIC, problems []Problem) *Machine {
	out := make([]NIC, 0, len(m.NICs)+len(nics))
	placed := false
	for _, nic := range m.NICs {
		dev := deviceOf(nic)
		if dev == device {
			continue
		}
		if !placed && naturalCompare(device, dev) < 0 {
			out, placed = append(out, nics...), true
		}
		out = append(out, nic)
	}
	if !placed {
		out = append(out, nics...)
	}
	var probs []Problem
	for _, p := range m.Problems {
		if p.Device != device {
			probs = append(probs, p)
		}
	}
	return m.WithNICs(out, append(probs, problems...))
}

// WithNICs is a copy of the machine with other NICs and problems: its
// GPUs, SR-IOV PFs, root, rdma_cm and topology file kept, whether its PCI tree is
// flat found again (with its problem), and its selection index rebuilt.
func (m *Machine) WithNICs(nics []NIC, problems []Problem) *Machine {
	next := &Machine{Root: m.Root, GPUs: m.GPUs, NICs: nics, PFs: m.PFs, RdmaCM: m.RdmaCM, TopologyFile: m.TopologyFile, NetdevNICs: m.NetdevNICs}
	next.FlatPCI = flatPCI(next.GPUs, nics)
	next.Problems = slices.DeleteFunc(slices.Clone(problems), func(p Problem) bool { return p.Reason == FlatPCIProblem })
	if next.FlatPCI && next.TopologyFile == nil {
		next.Problems = append(next.Problems, Problem{Device: "PCI topology", Reason: FlatPCIProblem})
	}
	next.idx = next.newIndex()
	return next
}

// deviceOf is a NIC's RDMA device (records written before NIC.Device
// existed carry only the target name).
func deviceOf(nic NIC) string {
	if nic.Device != "" {
		return nic.Device
	}
	dev, _ := ParseTarget(nic.Name)
	return dev
}

// DeviceNetdevs are the host netdevs that could be NICs' (a `device` link
// in /sys/class/net/<netdev>, as NetdevRDMADevices judges one), sorted.
// An unreadable /sys/class/net gives none.
func (s *Sysfs) DeviceNetdevs() []string {
	names, err := s.fs.names("/sys/class/net")
	if err != nil {
		return nil
	}
	var out []string
	for _, name := range names {
		if validName(name) && s.fs.exists("/sys/class/net/"+name+"/device") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
