package topology

import (
	"slices"
	"strconv"
	"strings"
)

// ports reads /sys/class/infiniband/<dev>/ports/N for every N.
func (d *discovery) ports(n *NIC, dir, devDir string, cd charDevs) []Port {
	names, err := d.fs.names(dir + "/ports")
	if err != nil {
		d.problem(n.Name, why(dir+"/ports", err))
		return nil
	}
	nums := make([]int, 0, len(names))
	for _, name := range names {
		if num, err := strconv.Atoi(name); err == nil && num > 0 {
			nums = append(nums, num)
		}
	}
	slices.Sort(nums)
	if len(nums) == 0 {
		d.problem(n.Name, dir+"/ports has no port")
	}
	ports := make([]Port, 0, len(nums))
	for _, num := range nums {
		ports = append(ports, d.port(n, dir, devDir, num, len(nums) > 1, cd))
	}
	return ports
}

func (d *discovery) port(n *NIC, dir, devDir string, num int, multi bool, cd charDevs) Port {
	return d.portWith(n, dir, func() string { return devDir }, num, multi, cd)
}

// portWith is port with the PCI function's directory resolved only when
// the port's netdev is not named by its GID table.
func (d *discovery) portWith(n *NIC, dir string, devDir func() string, num int, multi bool, cd charDevs) Port {
	pd := dir + "/ports/" + strconv.Itoa(num)
	p := Port{Num: num}
	p.State = d.portAttr(n.Name, pd+"/state")
	p.PhysState = d.portAttr(n.Name, pd+"/phys_state")
	p.LinkLayer = LinkLayer(d.portAttr(n.Name, pd+"/link_layer"))
	p.Rate, _ = d.fs.read(pd + "/rate")
	if reason := p.stateProblem(); reason != "" {
		d.problem(n.Name, reason)
	}
	p.Netdevs = d.portNetdevs(pd, devDir, num, multi)
	if len(p.Netdevs) == 0 && n.Virtual {
		if parent, err := d.fs.read(dir + "/parent"); err == nil && parent != "" {
			p.Netdevs = []string{parent}
		}
	}
	if len(p.Netdevs) == 0 {
		d.problem(n.Name, "port "+strconv.Itoa(num)+" has no netdev")
	}
	mad := cd.mad[madKey{dev: n.Name, port: num}]
	p.Umad, p.Issm = mad.umad, mad.issm
	return p
}

// stateProblem is the problem a port's state is, "" for none: not
// ACTIVE.
func (p Port) stateProblem() string {
	if p.State == "" || p.State == PortActive {
		return ""
	}
	reason := "port " + strconv.Itoa(p.Num) + " " + p.State
	if p.PhysState != "" {
		reason += " (" + p.PhysState + ")"
	}
	return reason
}

// portAttr reads a port attribute; numbered values such as "4: ACTIVE" or
// "5: LinkUp" keep only their name.
func (d *discovery) portAttr(dev, p string) string {
	text, err := d.fs.read(p)
	if err != nil {
		d.problem(dev, why(p, err))
		return ""
	}
	if _, name, ok := strings.Cut(text, ":"); ok {
		return strings.TrimSpace(name)
	}
	return text
}

// portNetdevs finds a port's netdev: the one behind GID 0 (RoCE ports; the
// file cannot be read on InfiniBand ports), else the PCI function's net/
// entries. On a device with several ports only the netdev whose dev_port
// (or, on old mlx4 kernels, dev_id) is the port's index belongs to it: a
// port whose netdev moved into a pod has none here, never its sibling's.
func (d *discovery) portNetdevs(pd string, dirOf func() string, num int, multi bool) []string {
	if nd, err := d.fs.read(pd + "/gid_attrs/ndevs/0"); err == nil && nd != "" {
		return []string{nd}
	}
	devDir := dirOf()
	if devDir == "" {
		return nil
	}
	names, err := d.fs.names(devDir + "/net")
	if err != nil || (len(names) <= 1 && !multi) {
		return names
	}
	match := d.netdevsOfPort(devDir, names, num)
	if len(match) == 0 && !multi {
		return names
	}
	return match
}

// netdevsOfPort keeps the netdevs whose dev_port is num-1; when none has a
// dev_port file, those whose dev_id is num-1.
func (d *discovery) netdevsOfPort(devDir string, names []string, num int) []string {
	var byPort, byID []string
	anyDevPort := false
	for _, name := range names {
		nd := devDir + "/net/" + name
		if dp, err := d.fs.readInt(nd + "/dev_port"); err == nil {
			anyDevPort = true
			if dp == num-1 {
				byPort = append(byPort, name)
			}
			continue
		}
		if id, err := d.fs.read(nd + "/dev_id"); err == nil {
			if v, err := strconv.ParseInt(id, 0, 32); err == nil && int(v) == num-1 {
				byID = append(byID, name)
			}
		}
	}
	if anyDevPort {
		return byPort
	}
	return byID
}
