package topology

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// selection is the working state of one Select call.
type selection struct {
	m      *Machine
	idx    *index
	why    []string // per NIC: "" when usable, else the reason
	load   []int    // per NIC: req.Load plus GPUs assigned so far
	usable int
}

func newSelection(m *Machine, idx *index, req Request) *selection {
	st := &selection{
		m:    m,
		idx:  idx,
		why:  make([]string, len(m.NICs)),
		load: make([]int, len(m.NICs)),
	}
	sel := newSelector(req.NICs)
	for i, n := range m.NICs {
		st.why[i] = unusable(n, req, sel)
		if st.why[i] == "" {
			st.usable++
		}
		st.load[i] = req.Load[n.Name]
	}
	return st
}

// better reports whether NIC a is the better pick of two equally close
// ones: fewer GPUs on it, then the name first in natural order.
func (st *selection) better(a, b int) bool {
	if st.load[a] != st.load[b] {
		return st.load[a] < st.load[b]
	}
	return st.idx.rank[a] < st.idx.rank[b]
}

// pending is one GPU waiting for a NIC: the span of its candidate order
// that holds its closest usable class, and how many usable NICs it holds.
type pending struct {
	slot     int // position in the request
	gpu      int // position in m.GPUs
	from, to int
	count    int
}

// assign picks a NIC for each GPU position; failed lists the GPU indices
// with no usable NIC at all.
func (st *selection) assign(gpus []int) (choices []Choice, failed []int) {
	work := make([]pending, 0, len(gpus))
	for slot, g := range gpus {
		p := st.closest(slot, g)
		if p.count == 0 {
			failed = append(failed, st.m.GPUs[g].Index)
			continue
		}
		work = append(work, p)
	}
	if len(failed) > 0 {
		return nil, failed
	}
	// GPUs with fewer equally close NICs choose first; then PCI order.
	slices.SortFunc(work, func(a, b pending) int {
		if a.count != b.count {
			return a.count - b.count
		}
		return a.gpu - b.gpu
	})
	choices = make([]Choice, len(gpus))
	for _, p := range work {
		choices[p.slot] = st.pick(p)
	}
	return choices, nil
}

// closest finds the span of GPU g's candidates at its closest usable class.
func (st *selection) closest(slot, g int) pending {
	p := pending{slot: slot, gpu: g}
	order, classes := st.idx.order[g], st.idx.class[g]
	first := true
	for i, ni := range order {
		if !first && classes[ni] != classes[order[p.from]] {
			break
		}
		if st.why[ni] != "" {
			continue
		}
		if first {
			p.from, first = i, false
		}
		p.to = i + 1
		p.count++
	}
	return p
}

func (st *selection) pick(p pending) Choice {
	best := -1
	for _, ni := range st.idx.order[p.gpu][p.from:p.to] {
		if st.why[ni] == "" && (best < 0 || st.better(ni, best)) {
			best = ni
		}
	}
	st.load[best]++
	reason := st.idx.reason[p.gpu][best]
	if p.count > 1 {
		reason += "; least loaded of " + strconv.Itoa(p.count) + " equally close NICs"
	}
	return Choice{
		GPU:    st.m.GPUs[p.gpu].Index,
		NIC:    st.m.NICs[best].Name,
		Class:  st.idx.class[p.gpu][best],
		Reason: reason,
	}
}

// pickAny chooses one NIC when no GPUs are given.
func (st *selection) pickAny() ([]Choice, error) {
	best := -1
	for ni := range st.m.NICs {
		if st.why[ni] == "" && (best < 0 || st.better(ni, best)) {
			best = ni
		}
	}
	if best < 0 {
		return nil, errors.New("no usable NIC: " + st.reasons())
	}
	return []Choice{{
		GPU:    -1,
		NIC:    st.m.NICs[best].Name,
		Class:  SYS,
		Reason: "no GPUs given: least loaded usable NIC (load " + strconv.Itoa(st.load[best]) + ")",
	}}, nil
}

// reasons lists why each NIC is unusable, in name order.
func (st *selection) reasons() string {
	if len(st.m.NICs) == 0 {
		return "no RDMA devices found"
	}
	parts := make([]string, 0, len(st.m.NICs))
	for ni := range st.m.NICs {
		if st.why[ni] != "" {
			parts = append(parts, st.m.NICs[ni].Name+" "+st.why[ni])
		}
	}
	return strings.Join(parts, ", ")
}
