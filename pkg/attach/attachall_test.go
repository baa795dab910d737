package attach

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/nsfs"
	"github.com/railcni/rail/pkg/rdma"
)

// planSpecs is a three-interface plan over three stand-in NICs: a move
// with its RDMA device (exclusive mode), a macvlan child, an IPv6 move;
// each with its own policy table and ARP tuning, as raild plans several
// rails in one subnet.
func planSpecs(nics []string) []Spec {
	return []Spec{
		{Mode: ModeMove, Parent: nics[0], Name: "rail0", MTU: 9000, Table: 120, ArpTuning: true,
			Addresses: prefixes("10.10.0.5/24"), Routes: []Route{route("10.20.0.0/16", "10.10.0.1")},
			RDMADevice: "mlx5_0", RDMANetns: rdma.NetnsExclusive},
		{Mode: ModeMacvlan, Parent: nics[1], Name: "rail1", Table: 121, ArpTuning: true, Addresses: prefixes("10.10.0.6/24")},
		{Mode: ModeMove, Parent: nics[2], Name: "rail2", Table: 122, Addresses: prefixes("fd00:10::7/64")},
	}
}

// unreachableGateway makes spec k fail after its interface exists: its
// last route's gateway is on no subnet of the interface.
func unreachableGateway(_ *testEnv, specs []Spec, k int) {
	r := route("10.99.0.0/16", "192.168.77.1")
	if specs[k].Addresses[0].Addr().Is6() {
		r = route("fd00:99::/64", "fd00:77::1")
	}
	specs[k].Routes = append(specs[k].Routes, r)
}

// nameTaken makes spec k fail before it touches anything: the pod has a
// foreign interface of that name.
func nameTaken(e *testEnv, specs []Spec, k int) { e.addPodVeth(specs[k].Name) }

// TestAttachAllFailureLeavesNothing extends the failure injection to a
// whole plan: a failure at interface k leaves interfaces 0..k-1 undone and
// host and pod netns exactly as before, and a step of the undo that fails
// is reported, never dropped.
func TestAttachAllFailureLeavesNothing(t *testing.T) {
	tests := []struct {
		name    string
		k       int
		fault   func(e *testEnv, specs []Spec, k int)
		failOut error // the RDMA device's move back fails
		wantErr []string
	}{
		{name: "first: unreachable gateway", k: 0, fault: unreachableGateway, wantErr: []string{"attach rail0 (move of"}},
		{name: "second: unreachable gateway", k: 1, fault: unreachableGateway, wantErr: []string{"attach rail1 (macvlan of"}},
		{name: "third: unreachable ipv6 gateway", k: 2, fault: unreachableGateway, wantErr: []string{"attach rail2 (move of"}},
		{name: "second: name taken in the pod", k: 1, fault: nameTaken, wantErr: []string{"already has an interface named rail1"}},
		{name: "third: name taken in the pod", k: 2, fault: nameTaken, wantErr: []string{"already has an interface named rail2"}},
		{name: "third fails, undoing the first fails too: both reported", k: 2, fault: unreachableGateway,
			failOut: errors.New("device busy"),
			wantErr: []string{"attach rail2 (move of", "undo interface rail0: detach rail0", "move rdma device mlx5_0 back to the host: device busy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			specs := planSpecs([]string{e.addNIC(9000, true), e.addNIC(1500, true), e.addNIC(1500, false)})
			tt.fault(e, specs, tt.k)
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
			rdma := &fakeRDMA{failOut: tt.failOut}
			a := attacher{moveRDMA: rdma.move}
			err := e.inHost(func() error { _, err := a.attachAll(e.pod.Path(), specs); return err })
			if err == nil {
				t.Fatal("AttachAll succeeded, want the injected failure")
			}
			t.Logf("AttachAll error: %v", err)
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q", want)
				}
			}
			if incomplete := tt.failOut != nil; errors.Is(err, ErrUndoIncomplete) != incomplete {
				t.Errorf("errors.Is(err, ErrUndoIncomplete) = %v, want %v", !incomplete, incomplete)
			}
			assertSame(t, "host netns", e.host, hostBefore)
			assertSame(t, "pod netns", e.pod, podBefore)
			// rail0's RDMA device went in and came back (also when rail0
			// itself failed: its own undo list put it back).
			wantRDMA := []string{fmt.Sprintf("mlx5_0 %q->%q", "", e.pod.Path()), fmt.Sprintf("mlx5_0 %q->%q", e.pod.Path(), "")}
			if got := strings.Join(rdma.calls, ";"); got != strings.Join(wantRDMA, ";") {
				t.Errorf("RDMA moves %q, want %q", got, wantRDMA)
			}
		})
	}
}

// TestAttachAllSaysWhatItCreated: a repeated AttachAll creates nothing and
// reports each interface as found; one that finds part of the plan creates
// the rest; when that one fails, it undoes only what it created and leaves
// the interfaces it found.
func TestAttachAllSaysWhatItCreated(t *testing.T) {
	e := newTestEnv(t)
	specs := planSpecs([]string{e.addNIC(9000, true), e.addNIC(1500, true), e.addNIC(1500, true)})
	a := attacher{moveRDMA: (&fakeRDMA{}).move}
	attachAll := func(specs []Spec) ([]Attached, error) {
		var got []Attached
		err := e.inHost(func() error {
			var err error
			got, err = a.attachAll(e.pod.Path(), specs)
			return err
		})
		return got, err
	}
	created := func(got []Attached) string {
		var out []string
		for _, g := range got {
			out = append(out, fmt.Sprintf("%s=%v", g.Name, g.Created))
		}
		return strings.Join(out, " ")
	}
	first, err := attachAll(specs)
	if err != nil || created(first) != "rail0=true rail1=true rail2=true" {
		t.Fatalf("first AttachAll = %s, %v; want all three created", created(first), err)
	}
	again, err := attachAll(specs)
	if err != nil || created(again) != "rail0=false rail1=false rail2=false" {
		t.Fatalf("repeated AttachAll = %s, %v; want all three found", created(again), err)
	}
	for i := range again {
		if again[i].Result != first[i].Result {
			t.Errorf("repeated AttachAll reports %+v, the first %+v", again[i].Result, first[i].Result)
		}
	}
	if err := e.inHost(func() error { return a.detach(e.pod.Path(), specs[2]) }); err != nil {
		t.Fatalf("detach rail2: %v", err)
	}
	podWithTwo := snapshot(t, e.pod)
	broken := append([]Spec(nil), specs...)
	unreachableGateway(e, broken, 2)
	if _, err := attachAll(broken); err == nil || !strings.Contains(err.Error(), "attach rail2") {
		t.Fatalf("AttachAll with rail2 broken = %v, want rail2's failure", err)
	}
	assertSame(t, "pod netns after a failure beside interfaces it found", e.pod, podWithTwo)
	got, err := attachAll(specs)
	if err != nil || created(got) != "rail0=false rail1=false rail2=true" {
		t.Fatalf("AttachAll after rail2 left = %s, %v; want only rail2 created", created(got), err)
	}
}

func TestAttachAllRefusesBeforeTouchingAnything(t *testing.T) {
	e := newTestEnv(t)
	specs := planSpecs([]string{e.addNIC(9000, true), e.addNIC(1500, true), e.addNIC(1500, true)})
	hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
	twice := append([]Spec(nil), specs...)
	twice[2].Name = "rail0"
	badLast := append([]Spec(nil), specs...)
	badLast[2].MTU = 20
	for name, tc := range map[string]struct {
		specs []Spec
		want  string
	}{
		"one name twice": {twice, "two interfaces are named rail0"},
		"last spec bad":  {badLast, "MTU 20"},
		"empty plan":     {nil, "no interface to attach"},
	} {
		err := e.inHost(func() error { _, err := AttachAll(e.pod.Path(), tc.specs); return err })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: AttachAll = %v, want an error containing %q", name, err, tc.want)
		}
	}
	assertSame(t, "host netns", e.host, hostBefore)
	assertSame(t, "pod netns", e.pod, podBefore)
}

// TestLockPod: while one holder has the pod's lock, nobody else gets it,
// through any descriptor of the namespace; once released, the next does.
func TestLockPod(t *testing.T) {
	e := newTestEnv(t)
	unlock, err := LockPod(e.pod.Path())
	if err != nil {
		t.Fatalf("LockPod: %v", err)
	}
	tryLock := func() error {
		// A second open file of the same namespace, as another plugin
		// process has: flock conflicts between open files.
		fd, err := unix.Open(e.pod.Path(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("open %s: %v", e.pod.Path(), err)
		}
		defer unix.Close(fd)
		return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	}
	if err := tryLock(); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("second lock while held = %v, want EWOULDBLOCK", err)
	}
	unlock()
	if err := tryLock(); err != nil {
		t.Fatalf("second lock after unlock = %v, want it taken", err)
	}
	if _, err := LockPod("/nonexistent/netns"); err == nil || !strings.Contains(err.Error(), "lock pod netns: statfs /nonexistent/netns") {
		t.Errorf("LockPod of a missing path = %v, want an error naming it", err)
	}
	fifo := filepath.Join(t.TempDir(), "netns")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LockPod(fifo); !errors.Is(err, nsfs.ErrNotNetns) {
		t.Errorf("LockPod of a FIFO = %v, want it refused as no netns (never opened)", err)
	}
}
