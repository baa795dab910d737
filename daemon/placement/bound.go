package placement

import (
	"fmt"
	"sort"
	"strings"

	"github.com/railcni/rail/pkg/topology"
)

// Bound is a distance bound and who set it, for the error message.
type Bound struct {
	Max    topology.Class
	Source string // "netconf maxDistance", "pool decode maxDistance"
}

// Tighter returns the stricter of b and other (nil when both are nil).
func Tighter(b, other *Bound) *Bound {
	switch {
	case b == nil:
		return other
	case other == nil:
		return b
	case other.Max < b.Max:
		return other
	}
	return b
}

// checkBounds refuses picks farther from their GPUs than the bound that
// applies to them: in.MaxDistance, tightened by in.NICBounds for the NIC.
// The error names each GPU, the NIC it would get and its class, and every
// closer NIC with why it was not usable (the pod holding it, a port down).
func (n *Node) checkBounds(in Input, req topology.Request, picks []Pick) error {
	var problems []string
	for _, p := range picks {
		bound := Tighter(in.MaxDistance, in.NICBounds[p.NIC.Name])
		if bound == nil {
			continue
		}
		for _, gpu := range p.GPUs {
			class := n.gpuClass(gpu, p.NIC)
			if class <= bound.Max {
				continue
			}
			problems = append(problems, fmt.Sprintf("GPU %d: the closest free NIC %s is %s, beyond %s %s; closer NICs: %s",
				gpu, p.NIC.Name, class, bound.Source, bound.Max, n.closerNICs(gpu, class, req)))
		}
		if len(p.GPUs) == 0 && p.Class > bound.Max {
			problems = append(problems, fmt.Sprintf("no GPUs known: NIC %s counts as %s, beyond %s %s (name the pod's GPUs, or drop the bound)",
				p.NIC.Name, p.Class, bound.Source, bound.Max))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("distance bound: %s", strings.Join(problems, "; "))
	}
	return nil
}

func (n *Node) gpuClass(gpu int, nic topology.NIC) topology.Class {
	for _, g := range n.Machine.GPUs {
		if g.Index == gpu {
			return n.Machine.Distance(g, nic)
		}
	}
	return topology.SYS
}

// closerNICs lists the NICs closer to gpu than class, each with its class
// and why it was not chosen, closest first.
func (n *Node) closerNICs(gpu int, class topology.Class, req topology.Request) string {
	type closer struct {
		name  string
		class topology.Class
		why   string
	}
	var list []closer
	for _, nic := range n.Machine.NICs {
		c := n.gpuClass(gpu, nic)
		if c >= class {
			continue
		}
		_, why := n.Machine.Usable(nic, req)
		if why == "" {
			why = "taken by another GPU of this pod"
		}
		list = append(list, closer{name: nic.Name, class: c, why: why})
	}
	if len(list) == 0 {
		return "none on this node"
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].class != list[j].class {
			return list[i].class < list[j].class
		}
		return list[i].name < list[j].name
	})
	parts := make([]string, len(list))
	for i, c := range list {
		parts[i] = fmt.Sprintf("%s %s (%s)", c.name, c.class, c.why)
	}
	return strings.Join(parts, ", ")
}
