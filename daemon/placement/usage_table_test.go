package placement

import "github.com/railcni/rail/pkg/api"

// Usage is a table of NIC use for tests; it is not safe for concurrent
// use.
type Usage struct {
	byNIC map[string]map[string]Holder // NIC -> lease key -> holder
}

// NewUsage returns an empty usage table.
func NewUsage() *Usage { return &Usage{byNIC: map[string]map[string]Holder{}} }

// Add records that key (sandbox/ifname) uses nic in mode.
func (u *Usage) Add(nic, key, sandbox, pod string, mode api.Mode) {
	if u.byNIC[nic] == nil {
		u.byNIC[nic] = map[string]Holder{}
	}
	u.byNIC[nic][key] = Holder{Sandbox: sandbox, Name: pod, Mode: mode}
}

// AddVF records that key holds VF vf (PCI address) of the PF whose port
// is port in vf mode, as a vf-mode lease does.
func (u *Usage) AddVF(port, vf, key, sandbox, pod string) {
	if u.byNIC[port] == nil {
		u.byNIC[port] = map[string]Holder{}
	}
	u.byNIC[port][key] = Holder{Sandbox: sandbox, Name: pod, Mode: api.ModeVF, VF: vf}
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
		if h.Mode.Exclusive() {
			return h.Sandbox, true
		}
	}
	return "", false
}

// Range calls fn for each pod interface using a NIC.
func (u *Usage) Range(fn func(nic string, h Holder)) {
	for nic, holders := range u.byNIC {
		for _, h := range holders {
			fn(nic, h)
		}
	}
}
