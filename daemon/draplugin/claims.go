package draplugin

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
)

// ClaimsFile is where the prepared claims are kept in raild's state dir,
// so a raild restarted between the kubelet's prepare and the pod's CNI
// ADD (or its unprepare) still knows them.
func ClaimsFile(stateDir string) string { return filepath.Join(stateDir, "dra-claims.json") }

// Assigned is one device a prepared claim got, with what Rail gives it.
type Assigned struct {
	Request string `json:"request"`
	Pool    string `json:"pool"` // the DRA pool (the node's name)
	Device  string `json:"device"`
	ShareID string `json:"shareID,omitempty"`
	Kind    Kind   `json:"kind"`
	NIC     string `json:"nic"`          // the port, or a VF's PF port
	VF      string `json:"vf,omitempty"` // a VF's PCI address
	Params  Params `json:"params"`
}

// PodRef is a pod a claim is reserved for.
type PodRef struct {
	Name string    `json:"name"`
	UID  types.UID `json:"uid"`
}

// Prepared is one claim the kubelet had prepared.
type Prepared struct {
	UID       types.UID  `json:"uid"`
	Namespace string     `json:"namespace"`
	Name      string     `json:"name"`
	Pods      []PodRef   `json:"pods"`
	Devices   []Assigned `json:"devices"`
}

// Claims are the prepared claims, kept in memory and in a file.
type Claims struct {
	path string
	mu   sync.Mutex
	byID map[types.UID]Prepared
}

// OpenClaims reads the file (absent: none prepared).
func OpenClaims(path string) (*Claims, error) {
	c := &Claims{path: path, byID: map[types.UID]Prepared{}}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("prepared DRA claims: %w", err)
	}
	defer f.Close()
	var list []Prepared
	if err := json.NewDecoder(f).Decode(&list); err != nil {
		return nil, fmt.Errorf("prepared DRA claims %s: %w (the kubelet prepares its claims again once it is removed)", path, err)
	}
	for _, p := range list {
		c.byID[p.UID] = p
	}
	return c, nil
}

// Put records prepared claims (a claim prepared again is replaced) and
// writes the file before it returns.
func (c *Claims) Put(ps ...Prepared) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := maps.Clone(c.byID)
	for _, p := range ps {
		next[p.UID] = p
	}
	return c.commit(next)
}

// Remove forgets claims (unknown ones are no error).
func (c *Claims) Remove(uids ...types.UID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[types.UID]Prepared, len(c.byID))
	for k, v := range c.byID {
		if !slices.Contains(uids, k) {
			next[k] = v
		}
	}
	if len(next) == len(c.byID) {
		return nil
	}
	return c.commit(next)
}

// commit writes next and makes it current; on a failed write nothing changes.
func (c *Claims) commit(next map[types.UID]Prepared) error {
	list := make([]Prepared, 0, len(next))
	for _, p := range next {
		list = append(list, p)
	}
	slices.SortFunc(list, func(a, b Prepared) int { return strings.Compare(string(a.UID), string(b.UID)) })
	data, err := json.Marshal(list)
	if err != nil {
		return fmt.Errorf("prepared DRA claims: %w", err)
	}
	if err := writeFile(c.path, data); err != nil {
		return fmt.Errorf("prepared DRA claims: %w", err)
	}
	c.byID = next
	return nil
}

// Get is one prepared claim.
func (c *Claims) Get(uid types.UID) (Prepared, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byID[uid]
	return p, ok
}

// All lists the prepared claims.
func (c *Claims) All() []Prepared {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Prepared, 0, len(c.byID))
	for _, p := range c.byID {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Prepared) int { return strings.Compare(string(a.UID), string(b.UID)) })
	return out
}

// ForPod lists the prepared claims reserved for a pod (by UID, else by
// name when the caller knows no UID).
func (c *Claims) ForPod(namespace, name, uid string) []Prepared {
	var out []Prepared
	for _, p := range c.All() {
		if p.Namespace != namespace {
			continue
		}
		if slices.ContainsFunc(p.Pods, func(r PodRef) bool { return (uid != "" && string(r.UID) == uid) || (uid == "" && r.Name == name) }) {
			out = append(out, p)
		}
	}
	return out
}

// Pods are the pods (namespace/name) holding a prepared claim.
func (c *Claims) Pods() map[string]bool {
	out := map[string]bool{}
	for _, p := range c.All() {
		for _, r := range p.Pods {
			out[p.Namespace+"/"+r.Name] = true
		}
	}
	return out
}

// writeFile replaces path with data through a synced temporary file.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dra-claims-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
