// Package placement turns a pod's GPUs, a network's selector and the node's
// current use of its NICs into the NICs the pod gets.
package placement

import (
	"fmt"
	"sort"
	"strings"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// Input is one attachment's request, already resolved to GPU indices.
type Input struct {
	GPUs      []int
	Mode      api.Mode
	NICs      []string           // selector: names or PCI addresses (empty: any)
	Device    string             // selector: the kubelet's device (Multus' deviceID), a PCI address ("": none)
	Rail      *int               // selector: rail index
	LinkLayer topology.LinkLayer // selector: "" for any
	PoolNICs  []string           // the chosen pool's NIC binding, names (empty: any)
	MaxNICs   int                // 0: one interface per chosen NIC
	// MaxDistance bounds every pick's class (nil: any class); NICBounds
	// tightens it per NIC (the bound of the pool bound to that NIC).
	MaxDistance *Bound
	NICBounds   map[string]*Bound
	// VFPerGPU, in vf mode, gives each GPU a VF of its own even where
	// several GPUs chose one PF (default: they share one VF).
	VFPerGPU bool
}

// Pick is one NIC the attachment gets, with the GPUs that chose it.
type Pick struct {
	NIC    topology.NIC
	GPUs   []int
	Class  topology.Class
	Reason string
}

// Node is the placement view of a node: its topology and rail numbering.
type Node struct {
	Machine *topology.Machine
	Rails   map[string]int // NIC name -> rail index
	// RDMANetns is the kernel's RDMA netns mode: in exclusive mode moving
	// a port's netdev moves its whole RDMA device (every port of it).
	RDMANetns rdma.NetnsMode
	// Guard says which NICs are the node's own; nil: what sysfs shows
	// (enslaved, upper devices, bond masters), without addresses and
	// routes.
	Guard Guard
	// Limits are the NICs and modes this node serves (config, node class).
	Limits Limits
}

// Choose picks NICs for in, given who uses which NIC now. It never picks
// a NIC that is the node's own (see Guard) where its protection refuses
// in's mode, and reads the picks' protection once more before it answers.
func (n *Node) Choose(in Input, use Use) ([]Pick, error) {
	if in.Mode == api.ModeVF {
		return nil, fmt.Errorf("mode vf places VFs: use ChooseVFs")
	}
	linkLayer, allowed, err := n.admit(in)
	if err != nil {
		return nil, err
	}
	protected := n.protection()
	for range maxRechecks {
		exclude, load, moved := constraints(use, in.Mode)
		excludeVFHolders(n.Machine, exclude, use, in.Mode)
		if n.RDMANetns == rdma.NetnsExclusive {
			excludeSiblings(n.Machine, exclude, moved)
		}
		excludeProtected(exclude, protected, in.Mode)
		req := topology.Request{
			GPUs:      in.GPUs,
			NICs:      allowed,
			LinkLayer: linkLayer,
			Exclude:   exclude,
			Load:      load,
		}
		picks, err := n.choose(in, req)
		if err != nil {
			return nil, err
		}
		var refused bool
		if protected, refused, err = n.recheck(picks, protected, in.Mode); err != nil || !refused {
			return picks, err
		}
	}
	return nil, fmt.Errorf("the NICs chosen for mode %s kept turning out to be the node's own (addresses or routes changing on them): try again", in.Mode)
}

// admit checks what every mode checks first: the link layer the mode and
// selector ask for, the node serving the mode, and the NICs the
// selector, rail, pool and node allow (nil: any).
func (n *Node) admit(in Input) (topology.LinkLayer, []string, error) {
	linkLayer, err := api.SelectorLinkLayer(in.Mode, in.LinkLayer)
	if err != nil {
		return "", nil, err
	}
	if err := n.Limits.checkMode(in.Mode); err != nil {
		return "", nil, err
	}
	allowed, err := n.allowed(in)
	return linkLayer, allowed, err
}

// choose selects for req and applies the device and distance rules.
func (n *Node) choose(in Input, req topology.Request) ([]Pick, error) {
	choices, err := n.Machine.Select(req)
	if err != nil {
		return nil, fmt.Errorf("no usable NIC for mode %s: %w%s", in.Mode, err, n.ibHint(in.Mode))
	}
	picks := groupByNIC(n.Machine, choices)
	if n.RDMANetns == rdma.NetnsExclusive && in.Mode.Exclusive() {
		picks = oneDevicePerPod(picks)
	}
	if err := n.checkBounds(in, req, picks); err != nil {
		return nil, err
	}
	if in.MaxNICs > 0 && len(picks) > in.MaxNICs {
		picks = picks[:in.MaxNICs]
	}
	return picks, nil
}

// allowed intersects the selector's NICs, the rail's NICs and the pool's
// NICs; nil means any NIC.
func (n *Node) allowed(in Input) ([]string, error) {
	var sets [][]string
	if len(in.NICs) > 0 {
		names, err := n.resolveNames(in.NICs, "nics")
		if err != nil {
			return nil, err
		}
		sets = append(sets, names)
	}
	if in.Device != "" {
		names, err := n.resolveNames([]string{in.Device}, "deviceID (the device the kubelet allocated for the NAD's resourceName)")
		if err != nil {
			return nil, err
		}
		sets = append(sets, names)
	}
	if in.Rail != nil {
		names := n.railNICs(*in.Rail)
		if len(names) == 0 {
			return nil, fmt.Errorf("rail %d: no NIC on this node carries that rail (rails here: %s)", *in.Rail, n.DescribeRails())
		}
		sets = append(sets, names)
	}
	if len(in.PoolNICs) > 0 {
		sets = append(sets, in.PoolNICs)
	}
	if len(n.Limits.NICs) > 0 {
		names, err := n.resolveNames(n.Limits.NICs, n.Limits.source()+" nics")
		if err != nil {
			return nil, err
		}
		sets = append(sets, names)
	}
	if len(sets) == 0 {
		return nil, nil
	}
	result := intersect(sets)
	if len(result) == 0 {
		if len(n.Limits.NICs) > 0 {
			return nil, fmt.Errorf("the NIC selector (nics, rail), the pool's NIC binding and the NICs this node serves (%s nics: %s) have no NIC in common",
				n.Limits.source(), strings.Join(n.Limits.NICs, ", "))
		}
		return nil, fmt.Errorf("the NIC selector (nics, rail) and the pool's NIC binding have no NIC in common")
	}
	return result, nil
}

func (n *Node) resolveNames(ids []string, field string) ([]string, error) {
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		nics := n.Machine.NICsByID(id)
		if len(nics) == 0 {
			return nil, fmt.Errorf("%s: %q is not an RDMA device on this node (have %s)", field, id, strings.Join(n.nicNames(), ", "))
		}
		for _, nic := range nics {
			names = append(names, nic.Name)
		}
	}
	return names, nil
}

// ResolveNames maps target names ("mlx5_0", "mlx4_0:2") and PCI addresses
// (every port of the function) to target names.
func (n *Node) ResolveNames(ids []string) ([]string, error) { return n.resolveNames(ids, "nics") }

func (n *Node) railNICs(rail int) []string {
	var names []string
	for name, r := range n.Rails {
		if r == rail {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// RailOf returns the rail a NIC carries.
func (n *Node) RailOf(nic string) (int, bool) {
	r, ok := n.Rails[nic]
	return r, ok
}

// DescribeRails lists each NIC's rail, "mlx5_0=0, mlx5_1=1", or "none".
func (n *Node) DescribeRails() string {
	if len(n.Rails) == 0 {
		return "none"
	}
	var parts []string
	for name, r := range n.Rails {
		parts = append(parts, fmt.Sprintf("%s=%d", name, r))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func (n *Node) nicNames() []string {
	names := make([]string, 0, len(n.Machine.NICs))
	for _, nic := range n.Machine.NICs {
		names = append(names, nic.Name)
	}
	return names
}

func intersect(sets [][]string) []string {
	count := map[string]int{}
	for _, set := range sets {
		seen := map[string]bool{}
		for _, name := range set {
			if !seen[name] {
				seen[name] = true
				count[name]++
			}
		}
	}
	var out []string
	for name, c := range count {
		if c == len(sets) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// groupByNIC folds per-GPU choices into one pick per NIC, in the order the
// GPUs chose them.
func groupByNIC(m *topology.Machine, choices []topology.Choice) []Pick {
	var picks []Pick
	index := map[string]int{}
	for _, c := range choices {
		i, ok := index[c.NIC]
		if !ok {
			nic, _ := m.NICByName(c.NIC)
			index[c.NIC] = len(picks)
			picks = append(picks, Pick{NIC: nic, Class: c.Class, Reason: c.Reason})
			i = len(picks) - 1
		}
		if c.GPU >= 0 {
			picks[i].GPUs = append(picks[i].GPUs, c.GPU)
		}
		if c.Class < picks[i].Class {
			picks[i].Class, picks[i].Reason = c.Class, c.Reason
		}
	}
	return picks
}

// ibHint names the mode that shares an InfiniBand port when a RoCE child
// mode (macvlan, ipvlan) found no NIC on a node that has InfiniBand ones.
func (n *Node) ibHint(m api.Mode) string {
	hint := m.Instead(topology.InfiniBand)
	if hint == "" {
		return ""
	}
	for _, nic := range n.Machine.NICs {
		if nic.LinkLayer == topology.InfiniBand {
			return hint
		}
	}
	return ""
}
