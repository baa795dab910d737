package draplugin

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// The standard attribute names Rail publishes beside its own: the PCI
// function, its PCIe root complex (what a claim aligns GPU and NIC on) and
// the NUMA node (for machines whose roots never match, such as Hyper-V
// VMs, and for Grace). numaNode is not a constant of the v1.36 API yet;
// a GPU driver that aligns on it must publish the same name.
const (
	AttrPCIBusID resourcev1.QualifiedName = "resource.kubernetes.io/pciBusID"
	AttrPCIeRoot resourcev1.QualifiedName = "resource.kubernetes.io/pcieRoot"
	AttrNUMANode resourcev1.QualifiedName = "resource.kubernetes.io/numaNode"
)

// Rail's own attributes and capacities, qualified by the driver name.
const (
	attrRDMADevice = "rdmaDevice"
	attrPort       = "port"
	attrNetdev     = "netdev"
	attrLinkLayer  = "linkLayer"
	attrRate       = "rate"
	attrRail       = "rail"
	attrFunction   = "function" // pf, vf, sf, bond, virtual, netdev (no RDMA device: a softRoCE node's NIC)
	attrModes      = "modes"    // the attach modes the device serves, comma-separated
	attrPF         = "pfPCI"    // a VF's PF
	attrShared     = "shared"   // bool: several claims may share it (the DeviceClasses select on it)
	capSlots       = "slots"
	capBandwidth   = "bandwidth"
)

// Kind is what a published device is.
type Kind string

// The kinds of device.
const (
	// KindShared is a port several claims share (macvlan, ipvlan, ipoib): one
	// device with allowMultipleAllocations and consumable capacity.
	KindShared Kind = "shared"
	// KindExclusive is a port one claim takes whole (move).
	KindExclusive Kind = "exclusive"
	// KindVF is one SR-IOV VF, one claim's (vf mode).
	KindVF Kind = "vf"
)

// Entry is what one device name stands for on this node.
type Entry struct {
	Device string     // the device's name in the slice
	Kind   Kind       //
	NIC    string     // the port (mlx5_0, mlx4_0:2); for a VF its PF's port
	VF     string     // a VF's PCI address ("" for a port)
	Modes  []api.Mode // the modes a claim of it may ask
	// Unavailable says why the device cannot be given now ("": it can);
	// such a device is tainted or left out (Config.DownAs).
	Unavailable string
	// Taint is the taint's key for an unavailable device.
	Taint string
}

// Use is one lease's hold on a NIC (by name) or, in vf mode, on a VF of
// the NIC's PF (by PCI address).
type Use struct {
	NIC  string
	VF   string // vf mode: the VF's PCI address (NIC: its PF's port)
	Pod  string // namespace/name
	Mode api.Mode
}

// Left is a NIC or VF never published, and why.
type Left struct {
	Name   string
	Reason string
}

// NodeView is everything the slice is built from: the inventory's current
// machine and protection, the rail numbering, the node's limits, the
// leases' use of the NICs, the pods holding Rail claims, and the NICs
// other DRA drivers publish.
type NodeView struct {
	Machine   *topology.Machine
	Protected map[string]topology.Protection
	Rails     map[string]int
	Limits    Limits
	Uses      []Use
	// ClaimPods are the pods (namespace/name) holding a Rail claim: their
	// leases are the claims' own, not a use outside DRA.
	ClaimPods map[string]bool
	// Others maps a PCI address to the other driver publishing it.
	Others map[string]string
}

// Limits are the node's own bounds (config, node class), as placement
// applies them: the NICs rail may give here and the modes it serves
// (empty: any); Source names where they come from, for reasons.
type Limits struct {
	NICs   []string // names or PCI addresses
	Modes  []api.Mode
	Source string
}

// Catalog is the node's devices as one NodeView gives them.
type Catalog struct {
	Devices []resourcev1.Device // in the slice, in name order
	Entries map[string]Entry    // every device built, by name (unavailable ones too)
	Left    []Left              // never published
}

// builder carries the settings into one build.
type builder struct {
	cfg      Config
	view     NodeView
	noTaints bool // the API server drops taints: unavailable devices leave
	noShare  bool // the API server drops consumable capacity: shared ports are exclusive
}

// Build makes the catalog of a node view.
func Build(cfg Config, view NodeView, noTaints, noShare bool) Catalog {
	b := builder{cfg: cfg, view: view, noTaints: noTaints, noShare: noShare}
	cat := Catalog{Entries: map[string]Entry{}}
	for _, n := range view.Machine.NICs {
		e, d, why := b.port(n)
		if why != "" {
			cat.Left = append(cat.Left, Left{Name: n.Name, Reason: why})
			continue
		}
		cat.add(e, d, b.downAsTaint())
	}
	if b.serves(api.ModeVF) {
		for _, pf := range view.Machine.PFs {
			pfNIC, ok := view.Machine.PFNIC(pf)
			if !ok {
				continue
			}
			for _, vf := range pf.VFs {
				e, d, why := b.vf(pfNIC, vf)
				if why != "" {
					cat.Left = append(cat.Left, Left{Name: vf.PCI, Reason: why})
					continue
				}
				cat.add(e, d, b.downAsTaint())
			}
		}
	}
	slices.SortFunc(cat.Devices, func(x, y resourcev1.Device) int { return strings.Compare(x.Name, y.Name) })
	return cat
}

func (b builder) downAsTaint() bool { return b.cfg.DownAs == DownTaint && !b.noTaints }

// add records the entry and publishes its device: tainted when it is
// unavailable and taints are used, else only when it is available.
func (c *Catalog) add(e Entry, d resourcev1.Device, taint bool) {
	if prev, dup := c.Entries[e.Device]; dup {
		c.Left = append(c.Left, Left{Name: e.NIC, Reason: fmt.Sprintf("its device name %s is %s's too", e.Device, prev.NIC)})
		return
	}
	c.Entries[e.Device] = e
	switch {
	case e.Unavailable == "":
		c.Devices = append(c.Devices, d)
	case taint:
		d.Taints = []resourcev1.DeviceTaint{{Key: e.Taint, Value: taintValue(e.Unavailable), Effect: resourcev1.DeviceTaintEffectNoSchedule}}
		c.Devices = append(c.Devices, d)
	}
}

// serves reports whether the node serves a mode (its limits; none: all).
func (b builder) serves(m api.Mode) bool {
	return len(b.view.Limits.Modes) == 0 || slices.Contains(b.view.Limits.Modes, m)
}

// limited reports whether the node's NIC list leaves n out.
func (b builder) limited(n topology.NIC) bool {
	l := b.view.Limits.NICs
	return len(l) > 0 && !slices.Contains(l, n.Name) && (n.PCI == "" || !slices.Contains(l, n.PCI))
}

// sharedModes are the child modes the node serves on a port of n's link layer.
func (b builder) sharedModes(n topology.NIC) []api.Mode {
	var out []api.Mode
	for _, m := range []api.Mode{api.ModeMacvlan, api.ModeIPVLAN, api.ModeIPoIB} {
		if b.serves(m) && m.LinkLayer().Matches(n.LinkLayer) {
			out = append(out, m)
		}
	}
	return out
}

// port builds the device of one port, or says why it is never published.
func (b builder) port(n topology.NIC) (Entry, resourcev1.Device, string) {
	switch {
	case n.VF:
		return Entry{}, resourcev1.Device{}, "an SR-IOV VF: published as a VF of its PF in vf mode"
	case b.limited(n):
		return Entry{}, resourcev1.Device{}, "not in the node's nics list (" + b.view.Limits.Source + ")"
	}
	if driver, ok := b.other(n.PCI); ok {
		return Entry{}, resourcev1.Device{}, "published by DRA driver " + driver + " (dra.publishNICsOf lets Rail publish it too)"
	}
	prot := b.view.Protected[n.Name]
	e := Entry{Device: deviceName(n.Name), NIC: n.Name}
	shared := b.sharedModes(n)
	switch {
	case len(shared) > 0 && !b.cfg.ExclusivePorts && !b.noShare && prot.Refusal(false) == "":
		e.Kind, e.Modes = KindShared, shared
	case b.serves(api.ModeMove) && prot.Refusal(true) == "":
		e.Kind, e.Modes = KindExclusive, []api.Mode{api.ModeMove}
	case len(shared) > 0 && prot.Refusal(false) == "":
		// shared modes without consumable capacity: one claim at a time
		e.Kind, e.Modes = KindExclusive, shared
	case prot.Protected():
		return Entry{}, resourcev1.Device{}, prot.Refusal(!b.serves(api.ModeMacvlan) && !b.serves(api.ModeIPVLAN) && !b.serves(api.ModeIPoIB))
	default:
		return Entry{}, resourcev1.Device{}, fmt.Sprintf("no mode the node serves fits a %s port (modes: %s)", n.LinkLayer, b.modesNote())
	}
	e.Unavailable, e.Taint = b.portState(n, e)
	d := b.device(e, n, n.PCI)
	if e.Kind == KindShared {
		b.shareable(&d, n)
	}
	return e, d, ""
}

func (b builder) modesNote() string {
	if len(b.view.Limits.Modes) == 0 {
		return "all"
	}
	return api.ModeList(b.view.Limits.Modes)
}

// vf builds the device of one VF of the PF whose port is pfNIC.
func (b builder) vf(pfNIC topology.NIC, vf topology.VF) (Entry, resourcev1.Device, string) {
	if b.limited(pfNIC) {
		return Entry{}, resourcev1.Device{}, "its PF " + pfNIC.Name + " is not in the node's nics list (" + b.view.Limits.Source + ")"
	}
	for _, pci := range []string{vf.PCI, vf.PF} {
		if driver, ok := b.other(pci); ok {
			return Entry{}, resourcev1.Device{}, "published by DRA driver " + driver + " (dra.publishNICsOf lets Rail publish it too)"
		}
	}
	e := Entry{Device: deviceName(pfNIC.Name + "-vf" + strconv.Itoa(vf.Index)), Kind: KindVF, NIC: pfNIC.Name, VF: vf.PCI,
		Modes: []api.Mode{api.ModeVF}}
	ours, taken := b.holder(vf.PCI, e.Kind)
	if vf.RDMA != "" && !ours && !taken {
		ours, taken = b.holder(vf.RDMA, e.Kind)
	}
	switch {
	case taken:
		e.Unavailable, e.Taint = "taken by a pod outside DRA", b.taintKey("taken")
	case ours:
		// the claim's pod holds it (in its netns: no netdev on the host)
	case vf.Attachable() != "":
		return Entry{}, resourcev1.Device{}, "VF " + vf.Attachable()
	case pfNIC.State != topology.PortActive:
		e.Unavailable, e.Taint = "PF port "+pfNIC.Name+" is "+stateWord(pfNIC.State), b.taintKey("port-down")
	}
	n := pfNIC
	n.Netdev, n.Device, n.Port = vf.Netdev, vf.RDMA, 0
	d := b.device(e, n, vf.PCI)
	b.setString(&d, attrFunction, "vf")
	b.setString(&d, attrPF, vf.PF)
	return e, d, ""
}

// portState says why a port's device cannot be given now.
func (b builder) portState(n topology.NIC, e Entry) (string, string) {
	if _, taken := b.holder(n.Name, e.Kind); taken {
		return "taken by a pod outside DRA", b.taintKey("taken")
	}
	if n.State != topology.PortActive {
		return "port " + n.Name + " is " + stateWord(n.State), b.taintKey("port-down")
	}
	return "", ""
}

// holder reports whether a lease holds the NIC (by name) or VF (by PCI
// address): for one of the Rail claims' pods (ours), or outside DRA in a
// way that takes the device (every use of an exclusive device, a move of
// a shared one). A vf-mode lease holds its VF, not its PF's port.
func (b builder) holder(nic string, kind Kind) (ours, taken bool) {
	for _, u := range b.view.Uses {
		if held := cmp.Or(u.VF, u.NIC); held != nic {
			continue
		}
		if b.view.ClaimPods[u.Pod] {
			ours = true
			continue
		}
		if kind != KindShared || u.Mode.Exclusive() {
			taken = true
		}
	}
	return ours, taken
}

func (b builder) other(pci string) (string, bool) {
	if pci == "" {
		return "", false
	}
	driver, ok := b.view.Others[pci]
	if ok && slices.Contains(b.cfg.PublishNICsOf, driver) {
		return "", false
	}
	return driver, ok
}

func (b builder) taintKey(name string) string { return b.cfg.DriverName + "/" + name }

// device is the slice entry with its attributes (pci: the function's address).
func (b builder) device(e Entry, n topology.NIC, pci string) resourcev1.Device {
	d := resourcev1.Device{Name: e.Device, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}}
	if pci != "" {
		d.Attributes[AttrPCIBusID] = stringAttr(pci)
	}
	if n.Root != "" {
		d.Attributes[AttrPCIeRoot] = stringAttr(n.Root)
	}
	if n.NUMA >= 0 {
		d.Attributes[AttrNUMANode] = intAttr(int64(n.NUMA))
	}
	rdma := n.Device
	if rdma == "" && n.Port == 0 && e.Kind != KindVF && !n.NetdevOnly {
		rdma = n.Name
	}
	b.setString(&d, attrRDMADevice, rdma)
	if n.Port > 0 {
		d.Attributes[b.qualified(attrPort)] = intAttr(int64(n.Port))
	}
	b.setString(&d, attrNetdev, n.Netdev)
	b.setString(&d, attrLinkLayer, string(n.LinkLayer))
	b.setString(&d, attrRate, n.Rate)
	if rail, ok := b.view.Rails[n.Name]; ok {
		d.Attributes[b.qualified(attrRail)] = intAttr(int64(rail))
	}
	b.setString(&d, attrFunction, function(n))
	b.setString(&d, attrModes, api.ModeList(e.Modes))
	shared := e.Kind == KindShared
	d.Attributes[b.qualified(attrShared)] = resourcev1.DeviceAttribute{BoolValue: &shared}
	return d
}

// shareable makes a shared port's device: several allocations, each
// taking a slot (and, with sharedBandwidth, some of the port's rate).
func (b builder) shareable(d *resourcev1.Device, n topology.NIC) {
	multi := true
	d.AllowMultipleAllocations = &multi
	slots := resource.NewQuantity(int64(b.cfg.SharedSlots), resource.DecimalSI)
	one := resource.MustParse("1")
	d.Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
		b.qualified(capSlots): {Value: *slots, RequestPolicy: &resourcev1.CapacityRequestPolicy{
			Default: &one, ValidRange: &resourcev1.CapacityRequestPolicyRange{Min: &one, Max: slots, Step: &one}}},
	}
	if gbits, ok := rateGbits(n.Rate); ok && b.cfg.SharedBandwidth {
		total := resource.MustParse(strconv.FormatInt(gbits, 10) + "G")
		unit := resource.MustParse("1G")
		d.Capacity[b.qualified(capBandwidth)] = resourcev1.DeviceCapacity{Value: total, RequestPolicy: &resourcev1.CapacityRequestPolicy{
			Default: &unit, ValidRange: &resourcev1.CapacityRequestPolicyRange{Min: &unit, Max: &total, Step: &unit}}}
	}
}

func (b builder) qualified(name string) resourcev1.QualifiedName {
	return resourcev1.QualifiedName(b.cfg.DriverName + "/" + name)
}

func (b builder) setString(d *resourcev1.Device, name, v string) {
	if v != "" {
		d.Attributes[b.qualified(name)] = stringAttr(v)
	}
}

func function(n topology.NIC) string {
	switch {
	case n.VF:
		return "vf"
	case n.SF:
		return "sf"
	case n.Bond:
		return "bond"
	case n.Virtual:
		return "virtual"
	case n.NetdevOnly:
		return "netdev"
	}
	return "pf"
}

func stringAttr(v string) resourcev1.DeviceAttribute {
	return resourcev1.DeviceAttribute{StringValue: &v}
}
func intAttr(v int64) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{IntValue: &v} }

// rateGbits reads the leading Gb/s figure of a port's rate ("400 Gb/sec (4X NDR)").
func rateGbits(rate string) (int64, bool) {
	num, rest, ok := strings.Cut(strings.TrimSpace(rate), " ")
	if !ok || !strings.HasPrefix(rest, "Gb/s") {
		return 0, false
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 1 {
		return 0, false
	}
	return int64(f), true
}

func stateWord(state string) string {
	if state == "" {
		return "in no known state"
	}
	return state
}

// taintValue fits a reason into a taint value (at most 63 characters of
// letters, digits, '-', '_' and '.', beginning and ending alphanumeric).
func taintValue(reason string) string {
	var sb strings.Builder
	for _, r := range reason {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			sb.WriteRune(r)
		default:
			sb.WriteByte('_')
		}
	}
	v := sb.String()
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "_-.")
}

// deviceName turns a NIC name into a DNS label: mlx5_0 → mlx5-0,
// mlx4_0:2 → mlx4-0-p2.
func deviceName(nic string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(strings.ReplaceAll(nic, ":", "-p")) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	name := strings.Trim(sb.String(), "-")
	if len(name) > 63 {
		name = strings.Trim(name[:63], "-")
	}
	return name
}
