package main

import (
	"fmt"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// Every network has its own subnet, so no two sides ever hand out the
// same address and each leak is told apart.
const (
	cniVersion           = "1.1.0"
	chainedSubnet        = "10.88.0.0/24" // eth0 of the ptp + rail chain
	primarySubnet        = "10.89.0.0/24" // eth0 of the upstream primary network
	macvlanSubnet        = "10.79.0.0/24" // upstream macvlan alone
	secondMacvlanSubnet  = "10.80.0.0/24" // upstream macvlan as the second network
	staticAddressPattern = "10.78.0.%d/24"
)

// podAnnotations are what every bench pod carries: its GPU and the
// opt-in, so rail attaches it whatever the attach policy (upstream
// plugins do not declare the capability; libcni passes them to rail only).
func podAnnotations() map[string]string {
	return map[string]string{api.AnnotationGPUs: "0", api.AnnotationAttach: "true"}
}

// scenario is rail and the upstream plugins doing the same job.
type scenario struct {
	name           string // what is compared
	rail, upstream side
	// kernel is the kernel's own work in rail's mode (nil: none alone,
	// as where rail is chained after another plugin).
	kernel side
}

// sideSet is everything the bench measures.
type sideSet struct {
	scenarios []scenario
	execFloor side
	kernel    *kernelFloors
	write     *writeFloor
}

// all lists every side in a fixed order (the rounds rotate it).
func (s sideSet) all() []side {
	out := make([]side, 0, 2*len(s.scenarios)+4)
	for _, sc := range s.scenarios {
		out = append(out, sc.rail, sc.upstream)
	}
	return append(out, s.execFloor, s.kernel.move, s.kernel.macvlan, s.write)
}

// buildSides writes the conflists of every scenario and the exec floor.
func buildSides(node *harness.Node, pods []*harness.Pod, ids *idSource, kernel *kernelFloors) ([]scenario, side, error) {
	b := sideBuilder{node: node, pods: pods, ids: ids}
	move := b.alone("rail-move", node.RailPlugin(map[string]any{"mode": api.ModeMove}))
	hostDevice := b.perSlot("host-device", b.hostDevice)
	hostDevice.restore = b.setUp
	railMacvlan := b.alone("rail-macvlan", node.RailPlugin(map[string]any{"mode": api.ModeMacvlan}))
	macvlan := b.alone("macvlan", b.macvlan(macvlanSubnet))
	chained := b.network("rail-chained", "eth0", node.PTP(chainedSubnet), node.RailPlugin(map[string]any{"mode": api.ModeMacvlan}))
	primary := b.network("ptp", "eth0", node.PTP(primarySubnet))
	second := b.network("second-macvlan", "net1", b.macvlan(secondMacvlanSubnet))
	noop := b.alone("noop", map[string]any{"type": noopPlugin})
	if b.err != nil {
		return nil, nil, b.err
	}
	railChained, multus := b.side(chained), b.side(primary, second)
	railChained.ifaces = []string{"eth0", "rail0"}
	scenarios := []scenario{
		{name: "rail move vs host-device + static", rail: move, upstream: hostDevice, kernel: kernel.move},
		{name: "rail macvlan vs macvlan + host-local", rail: railMacvlan, upstream: macvlan, kernel: kernel.macvlan},
		{name: "ptp + rail macvlan chained vs ptp, then macvlan as a second network", rail: railChained, upstream: multus},
	}
	noop.ifaces = nil // the no-op plugin gives the pod nothing
	return scenarios, noop, nil
}

// sideBuilder makes sides on the bench's pods. It keeps the first error;
// every later step then does nothing.
type sideBuilder struct {
	node *harness.Node
	pods []*harness.Pod
	ids  *idSource
	err  error
}

// side adds the attachments in order for every slot; each gives the pod
// the interface it names.
func (b *sideBuilder) side(nets ...attachment) *cniSide {
	var ifaces []string
	for _, a := range nets {
		ifaces = append(ifaces, a.ifName)
	}
	return &cniSide{pods: b.pods, ids: b.ids, networks: func(int) []attachment { return nets }, ifaces: ifaces}
}

// alone is one plugin as a network of its own, as Multus calls it (net1).
func (b *sideBuilder) alone(name string, plugin map[string]any) *cniSide {
	return b.side(b.network(name, "net1", plugin))
}

// network is one conflist of plugins, attached under ifName.
func (b *sideBuilder) network(name, ifName string, plugins ...map[string]any) attachment {
	if b.err != nil {
		return attachment{}
	}
	network, err := b.node.Network(name, cniVersion, plugins...)
	b.err = err
	return attachment{network: network, ifName: ifName}
}

// perSlot is a side whose conflist differs per pod slot.
func (b *sideBuilder) perSlot(name string, conf func(slot int) (map[string]any, error)) *cniSide {
	nets := make([][]attachment, len(b.pods))
	for slot := range b.pods {
		plugin, err := conf(slot)
		if err != nil && b.err == nil {
			b.err = err
		}
		nets[slot] = []attachment{b.network(fmt.Sprintf("%s-%d", name, slot), "net1", plugin)}
	}
	return &cniSide{pods: b.pods, ids: b.ids, networks: func(slot int) []attachment { return nets[slot] },
		ifaces: []string{"net1"}}
}

// hostDevice moves the VF of the slot into the pod with a static address
// (what a pod gets from host-device without rail: a device per pod).
func (b *sideBuilder) hostDevice(slot int) (map[string]any, error) {
	netdev, ok := b.node.Machine.Netdevs[nicName(slot+1)]
	if !ok {
		return nil, fmt.Errorf("host-device for slot %d: the simulated node has no %s", slot, nicName(slot+1))
	}
	return map[string]any{"type": "host-device", "device": netdev, "ipam": map[string]any{
		"type": "static", "addresses": []any{map[string]any{"address": fmt.Sprintf(staticAddressPattern, slot+10)}},
	}}, nil
}

// setUp sets the slot's VF up again in the node netns: upstream
// host-device's DEL returns a device down (moving a link between
// namespaces sets it down and host-device does not restore the state), an
// upstream behaviour the bench puts right, untimed, so that rail finds
// every VF as the node had it.
func (b *sideBuilder) setUp(slot int) error {
	name := b.node.Machine.Netdevs[nicName(slot+1)]
	h, err := b.node.Netns.Netlink()
	if err != nil {
		return err
	}
	defer h.Close()
	link, err := h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("host-device left %s: %w", name, err)
	}
	if err := h.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up again after host-device: %w", name, err)
	}
	return nil
}

// macvlan is an upstream macvlan child of the PF with host-local IPAM.
func (b *sideBuilder) macvlan(subnet string) map[string]any {
	return map[string]any{"type": "macvlan", "master": b.node.Machine.Netdevs[nicName(0)], "mode": "bridge",
		"ipam": b.node.HostLocal(subnet)}
}
