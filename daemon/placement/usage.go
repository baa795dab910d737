package placement

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/railcni/rail/pkg/api"
)

// Holder is one pod interface using a NIC.
type Holder struct {
	Sandbox   string
	Namespace string // with Name, the pod; Name empty: only the sandbox is known
	Name      string
	Mode      api.Mode
	VF        string // vf mode: the PCI address of the VF held (the NIC: its PF's port)
}

// Pod names the holder's pod: "ns/name", else the sandbox.
func (h Holder) Pod() string {
	switch {
	case h.Name == "":
		return h.Sandbox
	case h.Namespace == "":
		return h.Name
	}
	return h.Namespace + "/" + h.Name
}

// Use says which pod interfaces use which NIC now. raild reads it from
// the lease store's own index: nothing keeps a copy beside the leases.
type Use interface {
	// Range calls fn for each pod interface using a NIC.
	Range(fn func(nic string, h Holder))
}

// Holders maps each NIC in use to the pods using it ("ns/a, ns/b").
func Holders(use Use) map[string]string {
	byNIC := map[string][]Holder{}
	use.Range(func(nic string, h Holder) {
		held := cmp.Or(h.VF, nic) // a vf-mode lease holds its VF, not its PF's port
		byNIC[held] = append(byNIC[held], h)
	})
	out := make(map[string]string, len(byNIC))
	for nic, holders := range byNIC {
		out[nic] = podsOf(holders)
	}
	return out
}

// constraints reads use once: the NICs a request in mode may not take and
// why (a moved NIC is nobody else's; a NIC with children cannot be
// moved), how many pod interfaces use each NIC, and the pod each moved NIC
// sits in.
func constraints(use Use, mode api.Mode) (exclude map[string]string, load map[string]int, moved map[string]string) {
	exclude, load, moved = map[string]string{}, map[string]int{}, map[string]string{}
	shared := map[string][]Holder{} // only for a move request
	use.Range(func(nic string, h Holder) {
		if h.VF != "" {
			return // a VF's lease holds the VF, not its PF's port (excludeVFHolders)
		}
		load[nic]++
		switch {
		case h.Mode.Exclusive():
			moved[nic] = h.Pod()
			exclude[nic] = fmt.Sprintf("moved into pod %s", h.Pod())
		case mode.Exclusive():
			shared[nic] = append(shared[nic], h)
		}
	})
	for nic, holders := range shared {
		if _, moved := exclude[nic]; !moved {
			exclude[nic] = fmt.Sprintf("shared by %d pod interface(s) of %s in %s mode; move needs it alone", load[nic], podsOf(holders), holders[0].Mode)
		}
	}
	return exclude, load, moved
}

// podsOf names the pods of holders, sorted, each once.
func podsOf(holders []Holder) string {
	var pods []string
	for _, h := range holders {
		if pod := h.Pod(); !slices.Contains(pods, pod) {
			pods = append(pods, pod)
		}
	}
	sort.Strings(pods)
	return strings.Join(pods, ", ")
}
