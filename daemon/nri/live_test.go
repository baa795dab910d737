package nri

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// discoverFake writes the built-in h100x8-cx7x4 with opt and reads it back.
func discoverFake(t *testing.T, opt fakesys.Options) (*topology.Machine, *fakesys.Spec) {
	t.Helper()
	return discoverMachine(t, "h100x8-cx7x4", opt)
}

// discoverMachine writes a built-in machine with opt and reads it back.
func discoverMachine(t *testing.T, name string, opt fakesys.Options) (*topology.Machine, *fakesys.Spec) {
	t.Helper()
	root := t.TempDir()
	spec, err := fakesys.Write(root, name, opt)
	if err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return m, spec
}

// TestNewMachineGivesNewContainersTheNewNumbers: a NIC removed and added
// again (a driver reload) comes back with other uverbs numbers; once the
// inventory publishes its new snapshot, new containers get the new
// numbers, and a NIC missing from the snapshot is skipped, not guessed.
func TestNewMachineGivesNewContainersTheNewNumbers(t *testing.T) {
	before, spec := discoverFake(t, fakesys.Options{})
	nic, ok := spec.NIC("mlx5_0")
	if !ok || nic.Uverbs.Name == "" {
		t.Fatal("fake machine lacks mlx5_0's uverbs")
	}
	after, _ := discoverFake(t, fakesys.Options{DevNumbers: map[string][2]uint32{nic.Uverbs.Name: {231, 250}}})
	without := &topology.Machine{GPUs: before.GPUs, NICs: before.NICs[1:]}
	without.Root, without.RdmaCM = before.Root, before.RdmaCM

	st := newFakeState()
	st.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0")
	var live atomic.Pointer[topology.Machine]
	live.Store(before)
	p, err := New(Options{Machine: live.Load, State: st})
	if err != nil {
		t.Fatal(err)
	}
	uverbs := "/dev/infiniband/" + nic.Uverbs.Name
	steps := []struct {
		name    string
		machine *topology.Machine
		want    string // the uverbs device as summarize prints it; "" for none
	}{
		{"as discovered at start", nil, fmt.Sprintf("%s c %d:%d", uverbs, nic.Uverbs.Major, nic.Uverbs.Minor)},
		{"NIC removed", without, ""},
		{"NIC re-added with new numbers", after, uverbs + " c 231:250"},
	}
	for _, step := range steps {
		if step.machine != nil {
			live.Store(step.machine)
		}
		adj, _, err := p.CreateContainer(t.Context(), pod("s1", "default", nil), ctr("app"))
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		var got string
		for _, d := range summarize(adj).Devices {
			if strings.HasPrefix(d, uverbs+" ") {
				got = strings.Join(strings.Fields(d)[:3], " ")
			}
		}
		if got != step.want {
			t.Errorf("%s: uverbs = %q, want %q", step.name, got, step.want)
		}
	}
}
