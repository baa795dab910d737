package harness

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/railcni/rail/pkg/netnstest"
)

// NetnsWithPrefix lists the named namespaces whose name starts with prefix
// (a node's ID finds every namespace it made).
func NetnsWithPrefix(prefix string) ([]string, error) {
	entries, err := os.ReadDir(netnstest.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", netnstest.Dir, err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// PodNetnsLeft lists the node's pod namespaces that still exist.
func (n *Node) PodNetnsLeft() ([]string, error) {
	all, err := NetnsWithPrefix(n.ID + "-")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range all {
		if name != n.Netns.Name && name != n.fabricNetns.Name {
			out = append(out, name)
		}
	}
	return out, nil
}
