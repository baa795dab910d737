package config

import (
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// NodeClass is one kind of node in a mixed cluster (V100 nodes with one
// dual-port card, A100 nodes with two cards, ...): the nodes its
// nodeSelector matches get its keys in place of the top-level ones. raild
// matches its own Node's labels at start; the first matching class wins,
// and a node that matches none keeps the top-level keys.
type NodeClass struct {
	Name string `json:"name"`
	// NodeSelector picks the class's nodes by label, as a RailPool's
	// spec.nodeSelector does (matchLabels, matchExpressions).
	NodeSelector *metav1.LabelSelector `json:"nodeSelector"`
	// The keys a class overrides; unset ones keep the top-level value.
	NICs               []string           `json:"nics,omitempty"`
	Modes              []api.Mode         `json:"modes,omitempty"`
	AttachPolicy       api.AttachPolicy   `json:"attachPolicy,omitempty"`
	Rails              *Rails             `json:"rails,omitempty"`
	AllowProtectedNICs []string           `json:"allowProtectedNICs,omitempty"`
	Pools              map[string]PoolNIC `json:"pools,omitempty"`
	// SoftRoCE (nil: the top-level softRoCE) puts the class's nodes in
	// Soft-RoCE mode, or takes them out of it.
	SoftRoCE *bool `json:"softRoCE,omitempty"`
}

// PoolNIC is a config pool's NIC binding on a class's nodes (the pool's
// nics and rail keys there; both unset keeps the pool's own).
type PoolNIC struct {
	NICs []string `json:"nics,omitempty"`
	Rail *int     `json:"rail,omitempty"`
}

// ApplyNodeClass finds the first class whose nodeSelector matches the
// node's labels and lets its keys override the top-level ones. It returns
// the class's name, "" when none matches (the top-level keys stay).
// Finish has checked the classes.
func (c *Config) ApplyNodeClass(nodeLabels map[string]string) (string, error) {
	for i, class := range c.NodeClasses {
		sel, err := metav1.LabelSelectorAsSelector(class.NodeSelector)
		if err != nil {
			return "", fmt.Errorf("nodeClasses[%d].nodeSelector: %w", i, err)
		}
		if !sel.Matches(labels.Set(nodeLabels)) {
			continue
		}
		c.apply(class)
		c.NodeClass = class.Name
		return class.Name, nil
	}
	return "", nil
}

func (c *Config) apply(class NodeClass) {
	if len(class.NICs) > 0 {
		c.NICs = class.NICs
	}
	if len(class.Modes) > 0 {
		c.Modes = class.Modes
	}
	if class.AttachPolicy != "" {
		c.AttachPolicy = class.AttachPolicy
	}
	if class.SoftRoCE != nil {
		c.SoftRoCE = *class.SoftRoCE
	}
	if class.Rails != nil {
		c.Rails = *class.Rails
	}
	if len(class.AllowProtectedNICs) > 0 {
		c.AllowProtectedNICs = class.AllowProtectedNICs
	}
	for i, p := range c.Pools {
		if bind, ok := class.Pools[p.Name]; ok {
			c.Pools[i].NICs, c.Pools[i].Rail = bind.NICs, bind.Rail
		}
	}
}

// checkNodeClasses checks every class, naming the field at fault.
func (c *Config) checkNodeClasses() error {
	var errs []error
	if len(c.NodeClasses) > 0 && !c.Kubernetes.On {
		errs = append(errs, fmt.Errorf("nodeClasses: %d class(es), but the API connection is off (kubernetes.enabled %q): "+
			"raild reads its Node's labels to pick a class; turn the connection on, or move the keys to the top level",
			len(c.NodeClasses), c.Kubernetes.Enabled))
	}
	var names []string
	for i, class := range c.NodeClasses {
		at := fmt.Sprintf("nodeClasses[%d]", i)
		switch {
		case class.Name == "":
			errs = append(errs, fmt.Errorf("%s.name: empty; give each class a name (it is logged and shown by raild)", at))
		case slices.Contains(names, class.Name):
			errs = append(errs, fmt.Errorf("%s.name %q: two classes have this name", at, class.Name))
		}
		names = append(names, class.Name)
		if class.NodeSelector == nil {
			errs = append(errs, fmt.Errorf("%s.nodeSelector: missing; a class matches nodes by label (matchLabels, matchExpressions), "+
				"keys for every node belong at the top level", at))
		} else if _, err := metav1.LabelSelectorAsSelector(class.NodeSelector); err != nil {
			errs = append(errs, fmt.Errorf("%s.nodeSelector: %w", at, err))
		}
		if class.AttachPolicy != "" && !class.AttachPolicy.Valid() {
			errs = append(errs, fmt.Errorf("%s.attachPolicy %q: want one of %v", at, class.AttachPolicy, api.AttachPolicies()))
		}
		errs = append(errs, checkModes(at+".modes", class.Modes), checkNICList(at+".nics", class.NICs),
			checkNICList(at+".allowProtectedNICs", class.AllowProtectedNICs))
		if class.Rails != nil {
			errs = append(errs, checkRails(at+".rails", *class.Rails))
		}
		errs = append(errs, c.checkClassPools(at, class.Pools))
	}
	return errors.Join(errs...)
}

func (c *Config) checkClassPools(at string, pools map[string]PoolNIC) error {
	var errs []error
	for name, bind := range pools {
		if !slices.ContainsFunc(c.Pools, func(p ipam.PoolConfig) bool { return p.Name == name }) {
			errs = append(errs, fmt.Errorf("%s.pools[%s]: no pool of that name among the config's pools (RailPools bind NICs in their own spec)", at, name))
		}
		if len(bind.NICs) == 0 && bind.Rail == nil {
			errs = append(errs, fmt.Errorf("%s.pools[%s]: give nics or rail (the pool's NIC binding on these nodes)", at, name))
		}
		if bind.Rail != nil && (*bind.Rail < 0 || *bind.Rail > 63) {
			errs = append(errs, fmt.Errorf("%s.pools[%s].rail %d: want a rail index from 0 to 63", at, name, *bind.Rail))
		}
		errs = append(errs, checkNICList(fmt.Sprintf("%s.pools[%s].nics", at, name), bind.NICs))
	}
	return errors.Join(errs...)
}

// checkModes checks a list of attach modes.
func checkModes(field string, modes []api.Mode) error {
	for i, m := range modes {
		if !m.Attaches() {
			return fmt.Errorf("%s[%d] %q: want one of %s", field, i, m, api.ModeList(api.AttachModes()))
		}
	}
	return nil
}

// checkNICList checks a list of NIC names or PCI addresses has no empty entry.
func checkNICList(field string, nics []string) error {
	for i, n := range nics {
		if n == "" {
			return fmt.Errorf("%s[%d]: empty; name an RDMA device (mlx5_0, mlx4_0:2) or a PCI address", field, i)
		}
	}
	return nil
}

// checkRails checks the rail indices of a rails section.
func checkRails(field string, r Rails) error {
	var errs []error
	for nic, rail := range r.NICs {
		if rail < 0 || rail > 63 {
			errs = append(errs, fmt.Errorf("%s.nics[%s] = %d: want a rail index from 0 to 63", field, nic, rail))
		}
	}
	return errors.Join(errs...)
}
