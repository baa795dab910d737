package attach

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
)

// fakeRxe models the kernel's rxe link type for a host without RDMA: it
// keeps the devices by name, and refuses one whose netdev is not in the
// pod netns (as RDMA_NLDEV_CMD_NEWLINK does, looking the netdev up in the
// socket's netns). Each call is logged, with the pod's links at that time.
type fakeRxe struct {
	t       *testing.T
	pod     ns.NetNS
	devices map[string]string // rxe -> netdev
	failAdd error
	calls   []string
}

func (f *fakeRxe) ops() SoftRoCEOps {
	return SoftRoCEOps{
		Add: func(podNetns, name, netdev string) error {
			f.calls = append(f.calls, "add "+name+" on "+netdev)
			if f.failAdd != nil {
				return f.failAdd
			}
			if linkIn(f.t, f.pod, netdev) == nil {
				return fmt.Errorf("netdev %s is not in the pod", netdev)
			}
			if _, dup := f.devices[name]; dup {
				return errors.New("exists")
			}
			f.devices[name] = netdev
			return nil
		},
		Has: func(podNetns, name string) (bool, error) {
			_, ok := f.devices[name]
			return ok, nil
		},
		Delete: func(podNetns, name string) error {
			netdev := f.devices[name]
			present := netdev != "" && linkIn(f.t, f.pod, netdev) != nil
			f.calls = append(f.calls, fmt.Sprintf("delete %s (netdev still there: %v)", name, present))
			delete(f.devices, name)
			return nil
		},
	}
}

// TestSoftRoCEAttachDetach: the rxe is made on the pod interface once it
// is in the pod, a repeated ADD finds it, DEL deletes it before its
// interface goes, and a failing create undoes the interface it was for.
func TestSoftRoCEAttachDetach(t *testing.T) {
	for _, mode := range []Mode{ModeMacvlan, ModeIPVLAN, ModeMove} {
		t.Run(string(mode), func(t *testing.T) {
			e := newTestEnv(t)
			if mode == ModeIPVLAN {
				skipWithoutIPVLAN(t, e)
			}
			rxe := &fakeRxe{t: t, pod: e.pod, devices: map[string]string{}}
			a := attacher{moveRDMA: (&fakeRDMA{}).move, soft: rxe.ops()}
			s := Spec{Mode: mode, Parent: e.addNIC(1500, true), Name: "rail0", Addresses: prefixes("10.10.0.5/24"), SoftRoCE: "railrxe01234567"}
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
			run := func(f func() error) error { return e.inHost(f) }

			if err := run(func() error { _, err := a.attachAll(e.pod.Path(), []Spec{s}); return err }); err != nil {
				t.Fatalf("attach: %v", err)
			}
			if rxe.devices[s.SoftRoCE] != "rail0" {
				t.Fatalf("rxe devices %v, want %s on rail0", rxe.devices, s.SoftRoCE)
			}
			if err := run(func() error { _, err := a.attachAll(e.pod.Path(), []Spec{s}); return err }); err != nil {
				t.Fatalf("repeated attach: %v", err)
			}
			if err := run(func() error { return a.detach(e.pod.Path(), s) }); err != nil {
				t.Fatalf("detach: %v", err)
			}
			want := []string{"add railrxe01234567 on rail0", "delete railrxe01234567 (netdev still there: true)"}
			if !slices.Equal(rxe.calls, want) || len(rxe.devices) != 0 {
				t.Errorf("calls %q, devices left %v; want %q and none", rxe.calls, rxe.devices, want)
			}
			assertSame(t, "pod netns after detach", e.pod, podBefore)
			assertSame(t, "host netns after detach", e.host, hostBefore)

			rxe.calls, rxe.failAdd = nil, errors.New("injected: no rdma_rxe")
			err := run(func() error { _, err := a.attachAll(e.pod.Path(), []Spec{s}); return err })
			if err == nil || !errors.Is(err, rxe.failAdd) {
				t.Fatalf("attach with a failing rxe create: %v, want the create's error", err)
			}
			assertSame(t, "pod netns after the failed attach", e.pod, podBefore)
			assertSame(t, "host netns after the failed attach", e.host, hostBefore)
		})
	}
}
