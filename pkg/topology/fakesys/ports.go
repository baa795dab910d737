package fakesys

import (
	"fmt"
	"strconv"
)

// portPlan is one port of an RDMA device to write.
type portPlan struct {
	num       int
	linkLayer string
	state     string
	phys      string // phys_state name, "" for what state implies
	rate      string
	netdev    string // "" when it has none
}

// portOne is port 1, described by the plan's own fields.
func (p nicPlan) portOne() portPlan {
	return portPlan{num: 1, linkLayer: p.linkLayer, state: p.state, phys: p.phys, rate: p.rate, netdev: p.netdev}
}

// morePorts plans ports 2, 3, … of a function's RDMA device and writes
// their netdevs on the function itself, dev_port (and, as mlx4 does,
// dev_id) numbering them from 0 for port 1. Options.Netdevs renames one by
// its target name ("mlx4_0:2").
func (b *builder) morePorts(f Func, p nicPlan) []portPlan {
	out := make([]portPlan, 0, len(f.MorePorts))
	if len(f.MorePorts) > 0 && p.netdev != "" {
		b.f.file(p.devDir+"/net/"+p.netdev+"/dev_id", "0x0")
	}
	for i, mp := range f.MorePorts {
		pp := portPlan{num: i + 2, linkLayer: mp.LinkLayer, state: mp.State, phys: mp.PhysState, rate: mp.Rate, netdev: mp.Netdev}
		if pp.linkLayer == "" {
			pp.linkLayer = f.LinkLayer
		}
		pp.state, pp.rate = defaultState(pp.state), defaultRate(pp.rate, pp.linkLayer)
		target := p.name + ":" + strconv.Itoa(pp.num)
		switch nd, ok := b.opt.Netdevs[target]; {
		case ok:
			pp.netdev = nd
		case mp.NoNetdev:
			pp.netdev = ""
		case pp.netdev == "" && p.netdev != "":
			pp.netdev = p.netdev + "d" + strconv.Itoa(pp.num-1)
		}
		if pp.netdev != "" {
			dir := b.netdev(p.devDir, pp.netdev, pp.linkLayer, pp.num-1, pp.state, target)
			b.f.file(dir+"/dev_id", fmt.Sprintf("0x%x", pp.num-1))
		}
		out = append(out, pp)
	}
	return out
}

func defaultState(state string) string {
	if state == "" {
		return "ACTIVE"
	}
	return state
}

func defaultRate(rate, linkLayer string) string {
	switch {
	case rate != "":
		return rate
	case linkLayer == "Ethernet":
		return "200 Gb/sec (4X HDR)"
	}
	return "400 Gb/sec (4X NDR)"
}

// devicePorts writes every port of an RDMA device below ib and its umad
// (and, on InfiniBand ports, issm) char devices; it fills spec's port 1
// devices and MorePorts.
func (b *builder) devicePorts(ib, base string, p nicPlan, spec *NICSpec) {
	for _, pp := range append([]portPlan{p.portOne()}, p.more...) {
		b.port(ib+"/ports/"+strconv.Itoa(pp.num), pp)
	}
	n := b.verbs
	b.verbs++
	spec.Uverbs = b.classDev(base, "infiniband_verbs", "uverbs"+strconv.Itoa(n), p, ibMajor, uverbsBase+uint32(n))
	b.f.file(base+"/infiniband_verbs/"+spec.Uverbs.Name+"/abi_version", "1")
	spec.Umad, spec.Issm = b.madDevs(base, p, p.portOne())
	for _, pp := range p.more {
		ps := PortSpec{Num: pp.num, Netdev: pp.netdev, DevPort: pp.num - 1, LinkLayer: pp.linkLayer, State: pp.state}
		ps.Umad, ps.Issm = b.madDevs(base, p, pp)
		spec.MorePorts = append(spec.MorePorts, ps)
	}
}

// madDevs writes one port's umadN and, on InfiniBand, issmN, with the
// port number the kernel writes beside ibdev.
func (b *builder) madDevs(base string, p nicPlan, pp portPlan) (DevSpec, *DevSpec) {
	m := b.mad
	b.mad++
	port := strconv.Itoa(pp.num)
	umad := b.classDev(base, "infiniband_mad", "umad"+strconv.Itoa(m), p, ibMajor, uint32(m))
	b.f.file(base+"/infiniband_mad/"+umad.Name+"/port", port)
	if pp.linkLayer != "InfiniBand" {
		return umad, nil
	}
	issm := b.classDev(base, "infiniband_mad", "issm"+strconv.Itoa(m), p, ibMajor, issmBase+uint32(m))
	b.f.file(base+"/infiniband_mad/"+issm.Name+"/port", port)
	return umad, &issm
}
