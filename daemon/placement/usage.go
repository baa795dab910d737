package placement

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/railcni/rail/pkg/api"
)

// holder is one pod interface using a NIC.
type holder struct {
	sandbox string
	pod     string
	mode    api.Mode
}

// Usage records which pod interfaces use which NIC. It is rebuilt from the
// leases at start and kept in step with them; it is not safe for concurrent
// use (the caller holds its lock).
type Usage struct {
	byNIC map[string]map[string]holder // NIC -> lease key -> holder
}

// NewUsage returns an empty usage table.
func NewUsage() *Usage { return &Usage{byNIC: map[string]map[string]holder{}} }

// Add records that key (sandbox/ifname) uses nic in mode.
func (u *Usage) Add(nic, key, sandbox, pod string, mode api.Mode) {
	if u.byNIC[nic] == nil {
		u.byNIC[nic] = map[string]holder{}
	}
	u.byNIC[nic][key] = holder{sandbox: sandbox, pod: pod, mode: mode}
}

// Remove forgets key's use of nic.
func (u *Usage) Remove(nic, key string) {
	delete(u.byNIC[nic], key)
	if len(u.byNIC[nic]) == 0 {
		delete(u.byNIC, nic)
	}
}

// Users is how many pod interfaces use nic.
func (u *Usage) Users(nic string) int { return len(u.byNIC[nic]) }

// MovedTo returns the sandbox that holds nic in move mode, if any.
func (u *Usage) MovedTo(nic string) (string, bool) {
	for _, h := range u.byNIC[nic] {
		if h.mode.Exclusive() {
			return h.sandbox, true
		}
	}
	return "", false
}

// exclusions: a moved NIC is nobody else's; a NIC with children cannot be moved.
func (u *Usage) exclusions(mode api.Mode) map[string]string {
	out := map[string]string{}
	for nic, holders := range u.byNIC {
		for _, h := range holders {
			switch {
			case h.mode.Exclusive():
				out[nic] = fmt.Sprintf("moved into pod %s", h.pod)
			case mode.Exclusive():
				out[nic] = fmt.Sprintf("shared by %d pod interface(s) of %s in %s mode; move needs it alone", len(holders), podsOf(holders), h.mode)
			}
		}
	}
	return out
}

// Holders maps each NIC in use to the pods using it ("ns/a, ns/b").
func (u *Usage) Holders() map[string]string {
	out := make(map[string]string, len(u.byNIC))
	for nic, holders := range u.byNIC {
		out[nic] = podsOf(holders)
	}
	return out
}

// podsOf names the pods of holders, sorted, each once.
func podsOf(holders map[string]holder) string {
	var pods []string
	for _, h := range holders {
		if !slices.Contains(pods, h.pod) {
			pods = append(pods, h.pod)
		}
	}
	sort.Strings(pods)
	return strings.Join(pods, ", ")
}

func (u *Usage) loads() map[string]int {
	out := make(map[string]int, len(u.byNIC))
	for nic, holders := range u.byNIC {
		out[nic] = len(holders)
	}
	return out
}
