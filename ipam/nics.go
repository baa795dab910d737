package ipam

// NICUse is the allocator's own index of the leases that name each NIC,
// leases still being written included: an allocation holds its NICs from
// the moment it is reserved until its release is on disk, or until its
// write fails. It is only valid inside the callback it is given to (the
// allocator's lock is held), and the leases it shows must not be kept or
// changed.
type NICUse struct{ a *Allocator }

// Range calls fn for every lease naming a NIC, once per NIC it names. fn
// reads the allocator's own record: it must not keep or change it.
func (u NICUse) Range(fn func(nic string, l *Lease)) {
	for nic, modes := range u.a.byNIC {
		for _, entries := range modes {
			for _, e := range entries {
				fn(nic, &e.lease)
			}
		}
	}
}

// Modes calls fn for each mode leases hold nic in, with how many do, until
// fn returns false.
func (u NICUse) Modes(nic string, fn func(mode string, leases int) bool) {
	for mode, entries := range u.a.byNIC[nic] {
		if len(entries) == 0 {
			continue
		}
		if !fn(mode, len(entries)) {
			return
		}
	}
}

// HoldingIn calls fn for each lease holding nic in mode until fn returns
// false (the same rules as Range).
func (u NICUse) HoldingIn(nic, mode string, fn func(l *Lease) bool) {
	for _, e := range u.a.byNIC[nic][mode] {
		if !fn(&e.lease) {
			return
		}
	}
}

// ReadNICs runs fn on the NICs' use as it is now. fn must not call the
// allocator.
func (a *Allocator) ReadNICs(fn func(NICUse)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fn(NICUse{a: a})
}

// ReadSandbox calls fn for each lease on disk of a sandbox, whatever made
// it, from memory. fn runs with the allocator's lock held: it must not
// call the allocator, nor change the lease (a committed lease is never
// changed in place, so its NICs may be kept for reading).
func (a *Allocator) ReadSandbox(sandbox string, fn func(l *Lease)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	NICUse{a: a}.Sandbox(sandbox, fn)
}

// Sandbox calls fn for each lease on disk of a sandbox (ReadSandbox's
// rules), in the critical section of a placement: the sandbox's other
// leases as they are when this one's are reserved.
func (u NICUse) Sandbox(sandbox string, fn func(l *Lease)) {
	for k := range u.a.bySandbox[sandbox] {
		if e := u.a.leases[k]; e.committed {
			fn(&e.lease)
		}
	}
}

// indexNICs adds e to the index of every NIC its lease names.
func (a *Allocator) indexNICs(e *entry) {
	k, mode := e.lease.Key(), e.lease.Mode
	for _, nic := range e.lease.NICs {
		if a.byNIC[nic] == nil {
			a.byNIC[nic] = map[string]map[Key]*entry{}
		}
		if a.byNIC[nic][mode] == nil {
			a.byNIC[nic][mode] = map[Key]*entry{}
		}
		a.byNIC[nic][mode][k] = e
	}
}

// unindexNICs drops e from the index of every NIC its lease names. The
// emptied maps stay for the next lease (there are no more of them than
// NICs times modes).
func (a *Allocator) unindexNICs(e *entry) {
	k, mode := e.lease.Key(), e.lease.Mode
	for _, nic := range e.lease.NICs {
		if entries := a.byNIC[nic][mode]; entries[k] == e {
			delete(entries, k)
		}
	}
}
