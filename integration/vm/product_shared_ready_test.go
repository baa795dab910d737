package vm

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// injectedPaths are the device nodes raild gives a container of the
// leased pod: the rxe's uverbs and rdma_cm.
func (s *sharedNode) injectedPaths() []string {
	return []string{"/dev/infiniband/" + s.uverbs, "/dev/infiniband/rdma_cm"}
}

// checkReady: `raild doctor --pod` checks the pod against the kernel and
// the container's own /proc and every check passes: rail0 in the pod, up,
// with its lease address; the rxe's port ACTIVE, Ethernet; the GID index
// the container was given holds the pod's address in the rxe's real GID
// table (compared here with the guest's sysfs); the container's device
// nodes and memlock. raild's tracker last judged the pod ready (the
// condition it would write, logged: no API server here).
func (s *sharedNode) checkReady(t *testing.T) {
	r := s.leased.waitReport(t, "container app's process and every check passing", func(r *api.PodReport) bool {
		return startedIn(r, "app") && r.Ready
	})
	ifn := s.lease.ifName
	for _, name := range []string{"interface", "address", "port", "link-layer", "gid"} {
		wantCheck(t, r, name, ifn, api.CheckPass, "")
	}
	for _, name := range []string{"device-nodes", "memlock"} {
		wantCheck(t, r, name, "container app", api.CheckPass, "")
	}
	if c, ok := checkOf(r, "rdma-netns", ifn); ok {
		t.Errorf("rdma-netns checked in shared RDMA netns mode: %+v", c)
	}
	for _, c := range r.Checks {
		if c.Status != api.CheckPass {
			t.Errorf("[%s] %s %s: %s", c.Status, c.Subject, c.Name, c.Message)
		}
	}
	if len(r.Interfaces) != 1 {
		t.Fatalf("doctor --pod lists %d interfaces, want %s alone:\n%s", len(r.Interfaces), ifn, reportText(r))
	}
	i := r.Interfaces[0]
	if i.PortState != topology.PortActive {
		t.Errorf("doctor --pod: port %q, want %s", i.PortState, topology.PortActive)
	}
	gid, err := netip.ParseAddr(i.GID)
	if i.GIDIndex == nil || *i.GIDIndex != s.gid.index || err != nil || gid.Unmap() != s.addr.Unmap() {
		t.Errorf("doctor --pod: GID index %v holds %q; the kernel's table holds %s at %d", i.GIDIndex, i.GID, s.addr, s.gid.index)
	}
	c, _ := containerOf(r, "app")
	s.wantHolds(t, c)
	wantLimit := strconv.Itoa(memlockKiB * 1024)
	if c.Memlock != wantLimit+"/"+wantLimit+" (soft/hard)" || c.MemlockWanted != memlockKiB*1024 {
		t.Errorf("doctor --pod: memlock %q (raild set %d), want %s soft and hard", c.Memlock, c.MemlockWanted, wantLimit)
	}
	if want := "NCCL_IB_GID_INDEX=" + strconv.Itoa(s.gid.index); !slices.Contains(c.Env, want) {
		t.Errorf("doctor --pod: the container's env %v lacks %s", c.Env, want)
	}
	key := s.leased.key()
	s.n.waitVerdict(t, 0, key, "ready", func(v verdict) bool { return v.Ready && v.Reason == "RDMAReady" })
	if all := verdicts(readText(s.n.raildLog), key); !all[len(all)-1].Ready {
		t.Errorf("the tracker's last judgement of %s: %+v, want ready", key, all[len(all)-1])
	}
}

// wantHolds: raild injected exactly the rxe's nodes into the container and
// read them back from under its /proc/<pid>/root.
func (s *sharedNode) wantHolds(t *testing.T, c api.PodContainer) {
	t.Helper()
	want := s.injectedPaths()
	slices.Sort(want)
	for what, got := range map[string][]string{"injected": c.Injected, "present": c.Present} {
		got = slices.Sorted(slices.Values(got))
		if !slices.Equal(got, want) {
			t.Errorf("doctor --pod: container %s's device nodes %s: %v, want %v", c.Name, what, got, want)
		}
	}
}

// checkNotGiven: a container of the leased pod started while raild was
// down, so no NRI plugin gave it anything (the case the check's fix names):
// it really lacks the nodes and the limit. raild, back, records it on
// Synchronize as CreateContainer would have given it, and its device-nodes
// and memlock checks fail from its own /proc view while the other
// container's pass; doctor --pod and the tracker's judgement (the
// condition, logged without an API server) say not ready with the
// device-nodes check's reason. Once the container is gone the pod is
// ready again.
func (s *sharedNode) checkNotGiven(t *testing.T) {
	p := s.n.raild
	s.n.raild = nil
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("raild on SIGTERM: %v", err)
	}
	late := s.leased.startContainer(t, "late", verbsImage)
	from := s.n.startRaild(t, s.n.raildArgs...)
	v := s.n.probe(t, late, s.dev)
	kib, err := strconv.Atoi(v.memlock)
	if len(v.nodes) != 0 || err != nil || kib >= memlockKiB {
		t.Fatalf("the container started without raild holds %v and ulimit -l %s: want no node and the runtime's default", v.nodes, v.memlock)
	}
	subject := "container late"
	r := s.leased.waitReport(t, subject+"'s process and the pod not ready", func(r *api.PodReport) bool {
		return startedIn(r, "late") && !r.Ready
	})
	nodes := wantCheck(t, r, "device-nodes", subject, api.CheckFail, "DeviceNodesMissing")
	for _, path := range s.injectedPaths() {
		if !strings.Contains(nodes.Message, path) {
			t.Errorf("the device-nodes check does not name %s: %s", path, nodes.Message)
		}
	}
	limit := wantCheck(t, r, "memlock", subject, api.CheckFail, "MemlockTooLow")
	if have := strconv.Itoa(kib * 1024); !strings.Contains(limit.Message, have+"/"+have) {
		t.Errorf("the memlock check does not show the container's %s bytes: %s", have, limit.Message)
	}
	for _, name := range []string{"device-nodes", "memlock"} {
		wantCheck(t, r, name, "container app", api.CheckPass, "")
	}
	for _, name := range []string{"interface", "address", "port", "link-layer", "gid"} {
		wantCheck(t, r, name, s.lease.ifName, api.CheckPass, "")
	}
	if c, _ := containerOf(r, "late"); len(c.Present) != 0 || len(c.Injected) != 2 {
		t.Errorf("doctor --pod: container late injected %v, present %v: want raild's two nodes, none present", c.Injected, c.Present)
	}
	text, ok := s.leased.doctorText(t)
	if want := "rail.dev/RDMAReady: False (DeviceNodesMissing: " + subject + ": "; ok || !strings.Contains(text, want) {
		t.Errorf("raild doctor --pod (exit 0: %v) does not say %q:\n%s", ok, want, text)
	}
	key := s.leased.key()
	judged := s.n.waitVerdict(t, from, key, "not ready for the device nodes", func(v verdict) bool {
		return !v.Ready && v.Reason == "DeviceNodesMissing"
	})
	for _, want := range []string{subject + ": ", "(and 1 more failing check(s))", "raild doctor --pod " + key} {
		if !strings.Contains(judged.Message, want) {
			t.Errorf("the tracker's condition message lacks %q: %s", want, judged.Message)
		}
	}
	t.Logf("the tracker: %s (%s) %s", judged.Msg, judged.Reason, judged.Message)

	recovering := len(readText(s.n.raildLog))
	s.leased.removeContainer(t, late)
	s.leased.waitReport(t, "the pod ready again without container late", func(r *api.PodReport) bool { return r.Ready })
	s.n.waitVerdict(t, recovering, key, "ready again", func(v verdict) bool { return v.Ready && v.Reason == "RDMAReady" })
}
