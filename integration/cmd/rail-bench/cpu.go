package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100
// on every architecture Go runs Linux on.
const userHZ = 100

// cpuUse is CPU time (user+sys) spent so far by the child processes this
// process waited for (the plugins libcni exec'd, with what they exec'd
// and waited for themselves, such as IPAM plugins) and by raild.
type cpuUse struct {
	children, raild time.Duration
}

func (u cpuUse) sub(before cpuUse) cpuUse {
	return cpuUse{children: u.children - before.children, raild: u.raild - before.raild}
}

func (u cpuUse) add(other cpuUse) cpuUse {
	return cpuUse{children: u.children + other.children, raild: u.raild + other.raild}
}

// cpuMeter reads the CPU counters; raild is running as raildPID.
type cpuMeter struct {
	raildPID int
}

func (m cpuMeter) read() (cpuUse, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		return cpuUse{}, fmt.Errorf("rusage of child processes: %w", err)
	}
	raild, err := processCPU(m.raildPID)
	if err != nil {
		return cpuUse{}, err
	}
	return cpuUse{children: timeval(ru.Utime) + timeval(ru.Stime), raild: raild}, nil
}

func timeval(tv unix.Timeval) time.Duration {
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond
}

// processCPU is the user+sys time of a running process, all its threads
// (live and ended) included.
func processCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("raild CPU: %w (did raild exit?)", err)
	}
	ticks, err := statCPUTicks(string(data))
	if err != nil {
		return 0, fmt.Errorf("raild CPU: /proc/%d/stat: %w", pid, err)
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// statCPUTicks adds utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) may hold spaces and
// parentheses, so fields are counted after its closing parenthesis.
func statCPUTicks(line string) (int64, error) {
	end := strings.LastIndexByte(line, ')')
	if end < 0 {
		return 0, fmt.Errorf("no command name in %q", line)
	}
	fields := strings.Fields(line[end+1:])
	const utime, stime = 14 - 3, 15 - 3 // fields[0] is field 3 (state)
	if len(fields) <= stime {
		return 0, fmt.Errorf("%d fields after the command name, want at least %d", len(fields), stime+1)
	}
	var total int64
	for _, f := range []string{fields[utime], fields[stime]} {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("CPU time %q is not a tick count", f)
		}
		total += n
	}
	return total, nil
}
