package main

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// cpuClockSched is the kernel's CPUCLOCK_SCHED: a CPU clock that counts
// the nanoseconds the scheduler ran the task (sum_exec_runtime), not
// ticks. CPU clock ids of another process are built as the kernel's
// MAKE_PROCESS_CPUCLOCK does (what clock_getcpuclockid(3) returns).
const cpuClockSched = 2

// processCPU is the CPU time a running process has used so far, in
// nanoseconds: all its threads, live and ended (the kernel adds an ended
// thread's runtime to its thread group's). /proc/<pid>/stat counts in
// 10 ms ticks and the per-thread /proc/<pid>/task/*/schedstat loses the
// threads that end between two reads; the process's CPU clock has neither
// fault.
func processCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("raild CPU: no process (pid %d; did raild exit?)", pid)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(processClock(pid), &ts); err != nil {
		return 0, fmt.Errorf("raild CPU: CPU clock of pid %d: %w (did raild exit?)", pid, err)
	}
	return time.Duration(ts.Nano()), nil
}

// processClock is the id of pid's process CPU clock: the bitwise
// complement of the pid shifted left by 3, with the clock type in the low
// bits (no per-thread bit: the whole thread group).
func processClock(pid int) int32 {
	return int32(^int32(pid)<<3 | cpuClockSched)
}
