// Package sriov is raild's side of SR-IOV: VFs enabled at its start where
// its config asks (sriov.createVFs: on a PF the config names that has
// none, it writes the PF's sriov_numvfs below raild's root; by default
// raild uses the VFs the node has), the PFs raild owns (sriov.ownPFs), a
// pool's vf-mode settings (PoolVF), and vf mode's sweep, which keeps a VF
// from leaking past its pod (Sweep).
package sriov

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/railcni/rail/pkg/topology"
)

// Config is raild's `sriov` section.
type Config struct {
	// CreateVFs enables VFs at start, one rule per set of PFs.
	CreateVFs []Rule `json:"createVFs,omitempty"`
	// OwnPFs are the PFs whose VFs only raild hands out (by NIC, PCI
	// address or netdev): a VF of theirs in the host netns with an admin
	// MAC that no lease holds has leaked, and each reconcile resets it to
	// a clean state. Empty (the default): such VFs are only reported.
	OwnPFs []string `json:"ownPFs,omitempty"`
}

// Rule enables NumVFs VFs on each PF it names that has none.
type Rule struct {
	// PFs names PFs by their NIC (mlx5_0), PCI address or netdev.
	PFs    []string `json:"pfs"`
	NumVFs int      `json:"numVFs"`
}

// Validate checks the section; field names are the config's.
func (c Config) Validate() error {
	var errs []error
	for i, r := range c.CreateVFs {
		if len(r.PFs) == 0 {
			errs = append(errs, fmt.Errorf("sriov.createVFs[%d].pfs: empty: name the PFs by NIC (mlx5_0), PCI address or netdev", i))
		}
		for j, pf := range r.PFs {
			if pf == "" {
				errs = append(errs, fmt.Errorf("sriov.createVFs[%d].pfs[%d]: empty", i, j))
			}
		}
		if r.NumVFs <= 0 {
			errs = append(errs, fmt.Errorf("sriov.createVFs[%d].numVFs %d: want how many VFs to enable, at least 1 (at most the PF's sriov_totalvfs)", i, r.NumVFs))
		}
	}
	for i, pf := range c.OwnPFs {
		if pf == "" {
			errs = append(errs, fmt.Errorf("sriov.ownPFs[%d]: empty: name the PF by NIC (mlx5_0), PCI address or netdev", i))
		}
	}
	return errors.Join(errs...)
}

// Owned resolves OwnPFs on m: the PCI addresses of the PFs they name, and
// the names that match no SR-IOV PF of the node (a typo, or VFs not
// enabled: the PF then shows no sriov_totalvfs).
func (c Config) Owned(m *topology.Machine) (owned map[string]bool, unknown []string) {
	owned = map[string]bool{}
	for _, name := range c.OwnPFs {
		pf, ok := pfNamed(m, name)
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		owned[pf.PCI] = true
	}
	return owned, unknown
}

// Outcome is what Enable did to one PF a rule names.
type Outcome struct {
	PF      string // PCI address
	Created int    // VFs enabled (0: left as it was)
	Why     string // why it was left as it was ("" when created)
	Err     error  // the write failed, or the rule does not fit the PF
}

// Enable applies the rules to m, the machine read below root: each PF a
// rule names whose sriov_numvfs is 0 gets NumVFs VFs; a PF that has VFs is
// never changed (its VFs may be in use), so Enable changes nothing that
// exists and running it again changes nothing. A name that is no SR-IOV
// PF's is an Outcome with an error.
func Enable(root string, m *topology.Machine, c Config) []Outcome {
	var out []Outcome
	done := map[string]bool{}
	for i, r := range c.CreateVFs {
		for j, name := range r.PFs {
			pf, ok := pfNamed(m, name)
			if !ok {
				out = append(out, Outcome{PF: name, Err: fmt.Errorf("sriov.createVFs[%d].pfs[%d] %q: no SR-IOV PF of that NIC, PCI address or netdev on this node", i, j, name)})
				continue
			}
			if done[pf.PCI] {
				continue // the first rule naming it decides
			}
			done[pf.PCI] = true
			out = append(out, enable(root, pf, r.NumVFs, fmt.Sprintf("sriov.createVFs[%d]", i)))
		}
	}
	return out
}

func enable(root string, pf topology.PF, n int, field string) Outcome {
	switch {
	case pf.NumVFs != 0:
		return Outcome{PF: pf.PCI, Why: fmt.Sprintf("has %d VFs already (never changed: they may be in use)", pf.NumVFs)}
	case n > pf.TotalVFs:
		return Outcome{PF: pf.PCI, Err: fmt.Errorf("%s.numVFs %d: PF %s can have at most %d (sriov_totalvfs)", field, n, pf.PCI, pf.TotalVFs)}
	}
	path := filepath.Join(root, "sys/bus/pci/devices", pf.PCI, "sriov_numvfs")
	if err := os.WriteFile(path, []byte(strconv.Itoa(n)+"\n"), 0o644); err != nil {
		return Outcome{PF: pf.PCI, Err: fmt.Errorf("enable %d VFs on PF %s: %w", n, pf.PCI, err)}
	}
	return Outcome{PF: pf.PCI, Created: n}
}

// pfNamed finds the PF a rule names.
func pfNamed(m *topology.Machine, name string) (topology.PF, bool) {
	if pf, ok := m.PFByPCI(name); ok {
		return pf, true
	}
	for _, pf := range m.PFs {
		if pf.Netdev != "" && pf.Netdev == name {
			return pf, true
		}
		if nic, ok := m.PFNIC(pf); ok && nic.Name == name {
			return pf, true
		}
	}
	return topology.PF{}, false
}
