package topology

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Request says which GPUs need NICs and which NICs may serve them.
type Request struct {
	GPUs      []int             // GPU indices; empty: the selector alone decides
	NICs      []string          // allowed targets (mlx5_0, mlx4_0:2), PCI addresses (every port) or netdevs; empty: all
	LinkLayer LinkLayer         // "" for any
	Exclude   map[string]string // NIC name -> why it is unavailable ("owned by pod ns/x")
	Load      map[string]int    // GPUs or pods already using each NIC
}

// Choice is the NIC chosen for one GPU (GPU -1 when none were given).
type Choice struct {
	GPU    int    `json:"gpu"`
	NIC    string `json:"nic"`
	Class  Class  `json:"class"`
	Reason string `json:"reason"`
}

// Usable reports whether n may serve req and, if not, why: not in the
// selector, excluded, wrong link layer, port not ACTIVE, or no netdev.
func (m *Machine) Usable(n NIC, req Request) (ok bool, reason string) {
	reason = unusable(n, req, newSelector(req.NICs))
	return reason == "", reason
}

func unusable(n NIC, req Request, sel selector) string {
	if !sel.matches(n) {
		return "not selected (want " + strings.Join(sel.given, ", ") + ")"
	}
	if why, ok := req.Exclude[n.Name]; ok {
		if why == "" {
			return "excluded"
		}
		return why
	}
	if !req.LinkLayer.Matches(n.LinkLayer) {
		have := string(n.LinkLayer)
		if have == "" {
			have = "unknown"
		}
		return "link layer " + have + " (want " + string(req.LinkLayer) + ")"
	}
	switch n.State {
	case PortActive:
	case "":
		return "port state unknown"
	default:
		return "port " + n.State
	}
	if n.Netdev == "" {
		return "no netdev"
	}
	return ""
}

// selector matches targets by name ("mlx4_0:1" names mlx4_0), netdev, or
// PCI address (every port of the function).
type selector struct {
	given []string
	names []string // given, spelled as target names
	pcis  []string
}

func newSelector(nics []string) selector {
	sel := selector{given: nics}
	for _, s := range nics {
		sel.names = append(sel.names, canonicalTarget(s))
		if p := normalizePCI(s); p != "" {
			sel.pcis = append(sel.pcis, p)
		}
	}
	return sel
}

func (s selector) matches(n NIC) bool {
	if len(s.given) == 0 {
		return true
	}
	for i, g := range s.given {
		if g == n.Name || s.names[i] == n.Name || (n.Netdev != "" && g == n.Netdev) {
			return true
		}
	}
	return n.PCI != "" && slices.Contains(s.pcis, n.PCI)
}

// Select chooses a NIC for each requested GPU: among the usable NICs the
// closest class wins; GPUs whose closest class holds several NICs are
// spread over them one to one, in PCI order, by the fewest GPUs already on
// the NIC (req.Load plus this selection), then by name. GPUs with fewer
// equally close NICs choose first (a GPU with a single closest NIC is
// placed before GPUs that could spread onto it), then in PCI order.
// With no GPUs the least loaded usable NIC is chosen, with class SYS and
// GPU -1. Choices follow the order of req.GPUs, each GPU once.
func (m *Machine) Select(req Request) ([]Choice, error) {
	idx := m.index()
	st := newSelection(m, idx, req)
	if len(req.GPUs) == 0 {
		return st.pickAny()
	}
	positions, err := m.gpuPositions(idx, req.GPUs)
	if err != nil {
		return nil, err
	}
	choices, failed := st.assign(positions)
	if len(failed) > 0 {
		return nil, fmt.Errorf("%s: no usable NIC: %s", gpuList(failed), st.reasons())
	}
	return choices, nil
}

// Affinity is the full-node pick: every GPU, nothing excluded, no load.
// GPUs without any usable NIC are left out.
func (m *Machine) Affinity() map[int]string { return m.AffinityExcluding(nil) }

// AffinityExcluding is Affinity without the NICs in exclude (NIC name ->
// why), e.g. the node's own.
func (m *Machine) AffinityExcluding(exclude map[string]string) map[int]string {
	idx := m.index()
	st := newSelection(m, idx, Request{Exclude: exclude})
	positions := make([]int, len(m.GPUs))
	for i := range positions {
		positions[i] = i
	}
	choices, _ := st.assign(positions)
	out := make(map[int]string, len(choices))
	for _, c := range choices {
		out[c.GPU] = c.NIC
	}
	return out
}

// gpuPositions maps requested GPU indices to positions in m.GPUs, once each.
func (m *Machine) gpuPositions(idx *index, gpus []int) ([]int, error) {
	out := make([]int, 0, len(gpus))
	for _, g := range gpus {
		pos, ok := idx.gpuPos[g]
		if !ok {
			return nil, fmt.Errorf("gpu %d: no such GPU (%s)", g, m.gpuRange())
		}
		if !slices.Contains(out, pos) {
			out = append(out, pos)
		}
	}
	return out, nil
}

func (m *Machine) gpuRange() string {
	switch len(m.GPUs) {
	case 0:
		return "this node has no GPUs"
	case 1:
		return "this node has GPU " + strconv.Itoa(m.GPUs[0].Index)
	}
	return "this node has GPUs " + strconv.Itoa(m.GPUs[0].Index) + "-" + strconv.Itoa(m.GPUs[len(m.GPUs)-1].Index)
}

func gpuList(gpus []int) string {
	if len(gpus) == 1 {
		return "gpu " + strconv.Itoa(gpus[0])
	}
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = strconv.Itoa(g)
	}
	return "gpus " + strings.Join(parts, ", ")
}
