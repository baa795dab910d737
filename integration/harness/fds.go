package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// OpenFDs lists what process pid has open, one entry per descriptor, with
// the varying part of sockets, pipes and anonymous inodes dropped
// ("socket", "pipe", "anon_inode:[eventpoll]"), so two listings compare by
// kind and path.
func OpenFDs(pid int) ([]string, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list fds of %d: %w", pid, err)
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed while listing
		}
		out = append(out, fdKind(target))
	}
	sort.Strings(out)
	return out, nil
}

func fdKind(target string) string {
	for _, prefix := range []string{"socket:", "pipe:", "net:"} {
		if strings.HasPrefix(target, prefix) {
			return strings.TrimSuffix(prefix, ":")
		}
	}
	return target
}

// FDCounts counts a listing by kind.
func FDCounts(fds []string) map[string]int {
	out := map[string]int{}
	for _, fd := range fds {
		out[fd]++
	}
	return out
}
