package harness

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcStatusKiB reads a field counted in KiB, such as VmRSS or VmHWM, from
// /proc/PID/status.
func ProcStatusKiB(pid int, field string) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read status of %d: %w", pid, err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(value), " kB"))
		if err != nil {
			return 0, fmt.Errorf("parse %s %q of %d: %w", field, value, pid, err)
		}
		return kib, nil
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
