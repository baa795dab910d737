package main

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// pluginCPU is the CPU time (user+sys) spent so far by the child
// processes this process waited for: the plugins libcni exec'd, with what
// they exec'd and waited for themselves, such as IPAM plugins. raild's
// CPU is read apart (processCPU), in windows of its own (raildWindows).
func pluginCPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		return 0, fmt.Errorf("rusage of child processes: %w", err)
	}
	return timeval(ru.Utime) + timeval(ru.Stime), nil
}

func timeval(tv unix.Timeval) time.Duration {
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond
}
