package readiness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/daemon/process"
	"github.com/railcni/rail/pkg/api"
)

// unlimited is RLIM_INFINITY as /proc/<pid>/limits prints it.
const unlimited = math.MaxUint64

// ContainerView is what one container really holds, read from its init
// process: its device nodes, its memlock limit, its NCCL/UCX environment.
type ContainerView struct {
	Exists  bool     // the process is there
	Present []string // injected device nodes found, as char devices with their numbers
	Missing []string // injected device nodes not found (or not the injected device)
	// DriverMissing are the DRA driver's device nodes not found.
	DriverMissing []DriverDevice
	MemlockSoft   uint64
	MemlockHard   uint64
	MemlockErr    error
	Env           []string // NCCL_* and UCX_* (nil when unreadable)
	// ReadErr: the read did not finish in time; nothing else is known.
	ReadErr error
}

// View reads a container's process; a container that has not started
// (pid 0), whose process is gone, or whose pid another process holds now
// (its start time is not the one pinned when it started) has Exists
// false. Everything is read through one descriptor of the process's /proc
// directory and kept only when the process is still the pinned one after
// the reads: an init that exits mid-read gives no view, never a mix.
func (c *Checker) View(ctr Container) ContainerView {
	var v ContainerView
	if ctr.Pid <= 0 {
		return v
	}
	dir, err := process.Open(c.proc, process.Ref{Pid: ctr.Pid, Start: ctr.Start})
	if err != nil {
		return v
	}
	defer dir.Close()
	for _, d := range ctr.Devices {
		if holdsDevice(dir, d) {
			v.Present = append(v.Present, d.Path)
		} else {
			v.Missing = append(v.Missing, d.Path)
		}
	}
	for _, d := range ctr.DriverDevices {
		if holdsDevice(dir, d.Device) {
			v.Present = append(v.Present, d.Path)
		} else {
			v.DriverMissing = append(v.DriverMissing, d)
		}
	}
	v.MemlockSoft, v.MemlockHard, v.MemlockErr = memlock(dir)
	v.Env = commsEnv(dir)
	if dir.Alive() != nil {
		return ContainerView{}
	}
	v.Exists = true
	return v
}

// container checks one container from its own view.
func (c *Checker) container(ctr Container) []api.ReadinessCheck {
	subject := "container " + ctr.Name
	v := c.reads.view(ctr)
	if v.ReadErr != nil {
		return []api.ReadinessCheck{skip(checkDevices, subject, fmt.Sprintf("%s: %v", subject, v.ReadErr))}
	}
	if !v.Exists {
		why := "has not started yet"
		if ctr.Pid > 0 {
			why = fmt.Sprintf("has no process (pid %d exited)", ctr.Pid)
		}
		return []api.ReadinessCheck{skip(checkDevices, subject, subject+" "+why)}
	}
	var out []api.ReadinessCheck
	if len(v.Missing) > 0 {
		out = append(out, fail(checkDevices, subject, ReasonDevicesMissing,
			fmt.Sprintf("%s lacks %s (read under /proc/%d/root)", subject, strings.Join(v.Missing, ", "), ctr.Pid),
			"the container started without raild's device injection (NRI off in containerd, raild down when it started, "+
				"or another NRI plugin changed it): restart the pod with raild running"))
	}
	for _, d := range v.DriverMissing {
		out = append(out, fail(checkDevices, subject, ReasonDevicesMissing,
			fmt.Sprintf("%s lacks %s, the uverbs node of %s that claim %s holds (read under /proc/%d/root): RDMA falls back to TCP",
				subject, d.Path, d.NIC, d.Claim.Claim, ctr.Pid),
			fmt.Sprintf("the %s driver injects it, not raild: check that the driver's NRI/CDI injection is on and "+
				"that the container references the claim (spec.containers[].resources.claims)", d.Claim.Driver)))
	}
	switch {
	case len(v.Missing) > 0 || len(v.DriverMissing) > 0:
	case len(v.Present) == 0:
		out = append(out, skip(checkDevices, subject, subject+": no device node to look for (its DRA NIC's uverbs node is unknown to the node's topology)"))
	default:
		out = append(out, pass(checkDevices, subject, fmt.Sprintf("%s holds %s", subject, strings.Join(v.Present, ", "))))
	}
	if ctr.Memlock == 0 {
		return out
	}
	switch {
	case v.MemlockErr != nil:
		out = append(out, fail(checkMemlock, subject, ReasonMemlockTooLow, fmt.Sprintf("cannot read %s's limits: %v", subject, v.MemlockErr), ""))
	case v.MemlockSoft < ctr.Memlock || v.MemlockHard < ctr.Memlock:
		out = append(out, fail(checkMemlock, subject, ReasonMemlockTooLow,
			fmt.Sprintf("%s has Max locked memory %s, want at least %s", subject, limitsText(v.MemlockSoft, v.MemlockHard), limitText(ctr.Memlock)),
			"something lowered RLIMIT_MEMLOCK after raild set it (the image's entrypoint, ulimit -l, another NRI plugin): "+
				"RDMA memory registration will fail; drop the lower limit or raise nri.memlock"))
	default:
		out = append(out, pass(checkMemlock, subject, fmt.Sprintf("%s has Max locked memory %s", subject, limitsText(v.MemlockSoft, v.MemlockHard))))
	}
	return out
}

// holdsDevice reports whether the container's root has the device node as
// a char device with the injected numbers (numbers 0:0 are not compared):
// the node the container would open, links resolved inside its root (a
// link to the node's /dev is not the device).
func holdsDevice(dir *process.Dir, d Device) bool {
	st, err := dir.StatInRoot(d.Path)
	if err != nil {
		return false
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return false
	}
	if d.Major == 0 && d.Minor == 0 {
		return true
	}
	return int64(unix.Major(uint64(st.Rdev))) == d.Major && int64(unix.Minor(uint64(st.Rdev))) == d.Minor
}

// memlock reads the "Max locked memory" line of /proc/<pid>/limits.
func memlock(dir *process.Dir) (soft, hard uint64, err error) {
	const path = "limits"
	data, err := dir.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	const key = "Max locked memory"
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, key) {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(line, key))
		if len(f) < 2 {
			break
		}
		if soft, err = parseLimit(f[0]); err == nil {
			hard, err = parseLimit(f[1])
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		return soft, hard, nil
	}
	return 0, 0, fmt.Errorf("%s: no %q line", path, key)
}

func parseLimit(s string) (uint64, error) {
	if s == "unlimited" {
		return unlimited, nil
	}
	return strconv.ParseUint(s, 10, 64)
}

func limitText(v uint64) string {
	if v == unlimited {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

func limitsText(soft, hard uint64) string {
	return limitText(soft) + "/" + limitText(hard) + " (soft/hard)"
}

// MemlockText is a view's limit as doctor prints it.
func (v ContainerView) MemlockText() string {
	if v.MemlockErr != nil {
		return "unreadable: " + v.MemlockErr.Error()
	}
	if !v.Exists {
		return ""
	}
	return limitsText(v.MemlockSoft, v.MemlockHard)
}

// commsEnv reads the NCCL_* and UCX_* variables of /proc/<pid>/environ.
func commsEnv(dir *process.Dir) []string {
	data, err := dir.ReadFile("environ")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return []string{"(unreadable: " + err.Error() + ")"}
		}
		return nil
	}
	var out []string
	for _, kv := range bytes.Split(data, []byte{0}) {
		if bytes.HasPrefix(kv, []byte("NCCL_")) || bytes.HasPrefix(kv, []byte("UCX_")) {
			out = append(out, string(kv))
		}
	}
	return out
}
