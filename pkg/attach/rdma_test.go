package attach

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/railcni/rail/pkg/rdma"
)

// fakeRDMA records RDMA device moves instead of doing them (this kernel
// has no RDMA subsystem) and can be told to fail.
type fakeRDMA struct {
	mu      sync.Mutex
	calls   []string
	failIn  error // returned for moves into a pod
	failOut error // returned for moves back to the host
	// moved, when set, is what the kernel does beside a move that works
	// (an InfiniBand VF's IPoIB netdev is made anew in the host).
	moved func() error
}

func (f *fakeRDMA) move(dev, from, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s %q->%q", dev, from, to))
	err := f.failOut
	if from == "" {
		err = f.failIn
	}
	if err == nil && f.moved != nil {
		return f.moved()
	}
	return err
}

func TestRDMADeviceMovesWithNetdev(t *testing.T) {
	tests := []struct {
		name     string
		mode     Mode
		netns    rdma.NetnsMode
		device   string
		wantMove bool
		wantErr  string
	}{
		{"move, exclusive, device named", ModeMove, rdma.NetnsExclusive, "mlx5_0", true, ""},
		{"move, shared", ModeMove, rdma.NetnsShared, "mlx5_0", false, ""},
		{"move, exclusive, no device", ModeMove, rdma.NetnsExclusive, "", false, ""},
		{"macvlan, shared", ModeMacvlan, rdma.NetnsShared, "mlx5_0", false, ""},
		{"macvlan, exclusive", ModeMacvlan, rdma.NetnsExclusive, "mlx5_0", false, `needs the RDMA subsystem in "shared" netns mode`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			s := Spec{Mode: tt.mode, Parent: e.addNIC(1500, true), Name: "rail0", Addresses: prefixes("10.10.0.5/24"),
				RDMADevice: tt.device, RDMANetns: tt.netns}
			if got := s.movesRDMADevice(); got != tt.wantMove {
				t.Errorf("movesRDMADevice = %v, want %v", got, tt.wantMove)
			}
			fake := &fakeRDMA{}
			a := attacher{moveRDMA: fake.move}
			_, err := attachIn(e, a, s)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Attach = %v, want an error containing %q", err, tt.wantErr)
				}
				if len(fake.calls) != 0 {
					t.Errorf("RDMA moves %v for a refused spec", fake.calls)
				}
				return
			}
			if err != nil {
				t.Fatalf("Attach: %v", err)
			}
			if err := e.inHost(func() error { return a.detach(e.pod.Path(), s) }); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			var want []string
			if tt.wantMove {
				want = []string{fmt.Sprintf("mlx5_0 %q->%q", "", e.pod.Path()), fmt.Sprintf("mlx5_0 %q->%q", e.pod.Path(), "")}
			}
			if !reflect.DeepEqual(fake.calls, want) {
				t.Errorf("RDMA moves %v, want %v", fake.calls, want)
			}
		})
	}
}

func TestRDMAMoveFailures(t *testing.T) {
	tests := []struct {
		name          string
		failIn        error
		failOut       error
		wantAttachErr string
		wantDetachErr string
	}{
		{"move into the pod fails: netdev goes back", errors.New("device busy"), nil, "move rdma device mlx5_0 with", ""},
		{"device already back in the host at detach", nil, fmt.Errorf("x: %w", rdma.ErrDeviceNotFound), "", ""},
		{"move back fails: netdev still returns", nil, errors.New("device busy"), "", "move rdma device mlx5_0 back to the host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			s := Spec{Mode: ModeMove, Parent: e.addNIC(1500, true), Name: "rail0", Addresses: prefixes("10.10.0.5/24"),
				RDMADevice: "mlx5_0", RDMANetns: rdma.NetnsExclusive}
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
			a := attacher{moveRDMA: (&fakeRDMA{failIn: tt.failIn, failOut: tt.failOut}).move}
			_, err := attachIn(e, a, s)
			if !errorMatches(err, tt.wantAttachErr) {
				t.Fatalf("Attach = %v, want error %q", err, tt.wantAttachErr)
			}
			if err == nil {
				err = e.inHost(func() error { return a.detach(e.pod.Path(), s) })
				if !errorMatches(err, tt.wantDetachErr) {
					t.Fatalf("Detach = %v, want error %q", err, tt.wantDetachErr)
				}
			}
			assertSame(t, "host netns", e.host, hostBefore)
			assertSame(t, "pod netns", e.pod, podBefore)
		})
	}
}

func attachIn(e *testEnv, a attacher, s Spec) (Result, error) {
	var res Result
	err := e.inHost(func() error {
		got, err := a.attachAll(e.pod.Path(), []Spec{s})
		if err == nil {
			res = got[0].Result
		}
		return err
	})
	return res, err
}

// errorMatches: want "" means no error, else an error containing want.
func errorMatches(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}
