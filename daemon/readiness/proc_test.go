package readiness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/api"
)

// fakeProc lays out /proc/<pid> as the kernel shows it: limits, environ
// and root/ (the container's root) with device nodes made by mknod.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc { return &fakeProc{t: t, root: t.TempDir()} }

// limitsFile is /proc/<pid>/limits with the given Max locked memory.
func limitsFile(soft, hard string) string {
	return "Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max cpu time              unlimited            unlimited            seconds   \n" +
		"Max open files            1048576              1048576              files     \n" +
		"Max locked memory         " + soft + strings.Repeat(" ", 21-len(soft)) + hard + strings.Repeat(" ", 21-len(hard)) + "bytes     \n" +
		"Max address space         unlimited            unlimited            bytes     \n"
}

// start is the start time the fake process of a pid has.
func (f *fakeProc) start(pid int) uint64 { return 880000 + uint64(pid) }

// statFile is /proc/<pid>/stat as the kernel prints it, with a command
// that holds a space and a parenthesis and the given start time (field
// 22).
func statFile(pid int, start uint64) string {
	return fmt.Sprintf("%d (my (app) S 1 %d %d 0 -1 4194560 1185 0 0 0 3 1 0 0 20 0 1 0 %d 2711552 250 "+
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, pid, pid, start)
}

func (f *fakeProc) process(pid int, limits string, env []string, devs ...Device) {
	dir := filepath.Join(f.root, strconv.Itoa(pid))
	must(f.t, os.MkdirAll(filepath.Join(dir, "root/dev/infiniband"), 0o755))
	must(f.t, os.WriteFile(filepath.Join(dir, "stat"), []byte(statFile(pid, f.start(pid))), 0o444))
	must(f.t, os.WriteFile(filepath.Join(dir, "limits"), []byte(limits), 0o444))
	must(f.t, os.WriteFile(filepath.Join(dir, "environ"), []byte(strings.Join(env, "\x00")+"\x00"), 0o400))
	for _, d := range devs {
		p := filepath.Join(dir, "root", d.Path)
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(uint32(d.Major), uint32(d.Minor)))); err != nil {
			f.t.Skipf("mknod %s (needs root): %v", p, err)
		}
	}
}

func TestContainerChecks(t *testing.T) {
	uverbs := Device{Path: "/dev/infiniband/uverbs0", Major: 231, Minor: 192}
	cm := Device{Path: "/dev/infiniband/rdma_cm", Major: 10, Minor: 58}
	const want = 1 << 40
	tests := []struct {
		name    string
		limits  string
		has     []Device
		regular string // a regular file where a device node should be
		ctr     Container
		status  map[string]api.CheckStatus
		reason  string
		msgHas  string
	}{
		{name: "all there", limits: limitsFile("unlimited", "unlimited"), has: []Device{uverbs, cm},
			ctr:    Container{Name: "app", Pid: 100, Devices: []Device{uverbs, cm}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckPass, checkMemlock: api.CheckPass}},
		{name: "memlock exactly the limit", limits: limitsFile(strconv.Itoa(want), strconv.Itoa(want)), has: []Device{uverbs},
			ctr:    Container{Name: "app", Pid: 100, Devices: []Device{uverbs}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckPass, checkMemlock: api.CheckPass}},
		{name: "memlock lowered", limits: limitsFile("65536", "65536"), has: []Device{uverbs},
			ctr:    Container{Name: "app", Pid: 100, Devices: []Device{uverbs}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckPass, checkMemlock: api.CheckFail},
			reason: ReasonMemlockTooLow, msgHas: "Max locked memory 65536/65536 (soft/hard), want at least 1099511627776"},
		{name: "soft lowered only", limits: limitsFile("65536", "unlimited"), has: []Device{uverbs},
			ctr:    Container{Name: "app", Pid: 100, Devices: []Device{uverbs}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckPass, checkMemlock: api.CheckFail}, reason: ReasonMemlockTooLow},
		{name: "no memlock asked", limits: limitsFile("65536", "65536"), has: []Device{uverbs},
			ctr:    Container{Name: "app", Pid: 100, Devices: []Device{uverbs}},
			status: map[string]api.CheckStatus{checkDevices: api.CheckPass}},
		{name: "uverbs missing", limits: limitsFile("unlimited", "unlimited"), has: []Device{cm},
			ctr:    Container{Name: "app", Pid: 100, Devices: []Device{uverbs, cm}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckFail, checkMemlock: api.CheckPass},
			reason: ReasonDevicesMissing, msgHas: "container app lacks /dev/infiniband/uverbs0 (read under /proc/100/root)"},
		{name: "wrong device numbers", limits: limitsFile("unlimited", "unlimited"),
			has:    []Device{{Path: uverbs.Path, Major: 231, Minor: 193}},
			ctr:    Container{Name: "app", Pid: 100, Devices: []Device{uverbs}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckFail, checkMemlock: api.CheckPass}, reason: ReasonDevicesMissing},
		{name: "a regular file is no device", limits: limitsFile("unlimited", "unlimited"), regular: uverbs.Path,
			ctr:    Container{Name: "app", Pid: 100, Devices: []Device{uverbs}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckFail, checkMemlock: api.CheckPass}, reason: ReasonDevicesMissing},
		{name: "not started", ctr: Container{Name: "app", Devices: []Device{uverbs}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckSkip}, msgHas: "has not started yet"},
		{name: "exited", ctr: Container{Name: "app", Pid: 4242, Devices: []Device{uverbs}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckSkip}, msgHas: "pid 4242 exited"},
		{name: "limits unreadable", limits: "garbage\n", has: []Device{uverbs},
			ctr:    Container{Name: "app", Pid: 100, Devices: []Device{uverbs}, Memlock: want},
			status: map[string]api.CheckStatus{checkDevices: api.CheckPass, checkMemlock: api.CheckFail}, reason: ReasonMemlockTooLow,
			msgHas: `no "Max locked memory" line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := newFakeProc(t)
			if tt.limits != "" {
				proc.process(100, tt.limits, []string{"PATH=/bin", "NCCL_IB_HCA==mlx5_0:1"}, tt.has...)
			}
			if tt.regular != "" {
				must(t, os.WriteFile(filepath.Join(proc.root, "100/root", tt.regular), nil, 0o644))
			}
			if tt.ctr.Pid > 0 {
				tt.ctr.Start = proc.start(tt.ctr.Pid)
			}
			got := checker(t, machine(t, "lab-1x1"), proc.root).container(tt.ctr)
			if len(got) != len(tt.status) {
				t.Fatalf("got %d checks %+v; want %v", len(got), got, tt.status)
			}
			for _, c := range got {
				if c.Status != tt.status[c.Name] || c.Subject != "container app" {
					t.Fatalf("check %+v; want %s", c, tt.status[c.Name])
				}
				if c.Status == api.CheckFail && (c.Reason != tt.reason || c.Fix == "" && c.Name != checkMemlock) {
					t.Fatalf("failure %+v; want reason %s and a fix", c, tt.reason)
				}
			}
			if tt.msgHas != "" && !strings.Contains(joinMessages(got), tt.msgHas) {
				t.Fatalf("messages %q lack %q", joinMessages(got), tt.msgHas)
			}
		})
	}
}

func joinMessages(checks []api.ReadinessCheck) string {
	var s []string
	for _, c := range checks {
		s = append(s, c.Message)
	}
	return strings.Join(s, " | ")
}

func TestViewReadsCommsEnv(t *testing.T) {
	proc := newFakeProc(t)
	proc.process(7, limitsFile("unlimited", "unlimited"),
		[]string{"PATH=/bin", "NCCL_IB_HCA==mlx5_0:1", "UCX_NET_DEVICES=mlx5_0:1", "HOME=/", "NCCL_IB_GID_INDEX=3"})
	v := checker(t, machine(t, "lab-1x1"), proc.root).View(Container{Name: "app", Pid: 7, Start: proc.start(7)})
	want := "NCCL_IB_HCA==mlx5_0:1 UCX_NET_DEVICES=mlx5_0:1 NCCL_IB_GID_INDEX=3"
	if got := strings.Join(v.Env, " "); got != want || !v.Exists || v.MemlockText() != "unlimited/unlimited (soft/hard)" {
		t.Fatalf("view %+v; env %q, want %q", v, got, want)
	}
}

// TestPinnedProcessOnly: a container's pid is read only while the process
// holding it is the one pinned when the container started; a pid another
// process holds now (its start time differs), or one never pinned, is the
// container's exited process, and nothing of the new holder is read.
func TestPinnedProcessOnly(t *testing.T) {
	uverbs := Device{Path: "/dev/infiniband/uverbs0", Major: 231, Minor: 192}
	tests := []struct {
		name   string
		start  func(p *fakeProc) uint64 // the start time pinned
		status api.CheckStatus
		msgHas string
	}{
		{name: "the pinned process", start: func(p *fakeProc) uint64 { return p.start(100) }, status: api.CheckPass},
		{name: "pid reused by another process", start: func(p *fakeProc) uint64 { return p.start(100) - 1 }, status: api.CheckSkip, msgHas: "pid 100 exited"},
		{name: "never pinned", start: func(*fakeProc) uint64 { return 0 }, status: api.CheckSkip, msgHas: "pid 100 exited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := newFakeProc(t)
			proc.process(100, limitsFile("unlimited", "unlimited"), []string{"NCCL_SOCKET_IFNAME=eth0"}, uverbs)
			ctr := Container{Name: "app", Pid: 100, Start: tt.start(proc), Devices: []Device{uverbs}, Memlock: 1 << 30}
			c := checker(t, machine(t, "lab-1x1"), proc.root)
			got := c.container(ctr)
			for _, ch := range got {
				if ch.Status != tt.status && !(ch.Name == checkMemlock && tt.status == api.CheckPass) {
					t.Fatalf("check %+v; want %s", ch, tt.status)
				}
			}
			if tt.msgHas != "" && !strings.Contains(joinMessages(got), tt.msgHas) {
				t.Fatalf("messages %q lack %q", joinMessages(got), tt.msgHas)
			}
			if v := c.View(ctr); tt.status != api.CheckPass && (v.Exists || v.Env != nil || len(v.Present) > 0) {
				t.Fatalf("view of a process not the container's: %+v", v)
			}
		})
	}
}
