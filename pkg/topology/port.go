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
		ports = append(ports, d.port(n, dir, devDir, num, cd))
	}
	return ports
}

func (d *discovery) port(n *NIC, dir, devDir string, num int, cd charDevs) Port {
	pd := dir + "/ports/" + strconv.Itoa(num)
	p := Port{Num: num}
	p.State = d.portAttr(n.Name, pd+"/state")
	p.PhysState = d.portAttr(n.Name, pd+"/phys_state")
	p.LinkLayer = LinkLayer(d.portAttr(n.Name, pd+"/link_layer"))
	p.Rate, _ = d.fs.read(pd + "/rate")
	if p.State != "" && p.State != "ACTIVE" {
		reason := "port " + strconv.Itoa(num) + " " + p.State
		if p.PhysState != "" {
			reason += " (" + p.PhysState + ")"
		}
		d.problem(n.Name, reason)
	}
	p.Netdevs = d.portNetdevs(pd, devDir, num)
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
// entries, narrowed by dev_port when a function carries several ports.
func (d *discovery) portNetdevs(pd, devDir string, num int) []string {
	if nd, err := d.fs.read(pd + "/gid_attrs/ndevs/0"); err == nil && nd != "" {
		return []string{nd}
	}
	if devDir == "" {
		return nil
	}
	names, err := d.fs.names(devDir + "/net")
	if err != nil || len(names) <= 1 {
		return names
	}
	var match []string
	want := strconv.Itoa(num - 1)
	for _, name := range names {
		if dp, err := d.fs.read(devDir + "/net/" + name + "/dev_port"); err == nil && dp == want {
			match = append(match, name)
		}
	}
	if len(match) == 0 {
		return names
	}
	return match
}
