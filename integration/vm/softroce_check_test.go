package vm

import (
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/rdma"
)

// TestCheckSoftRoCE: raild's start-up check of a softRoCE node against
// the guest's kernel 7.3: in the shared boot it passes (an rxe made in a
// throwaway netns has its RoCE v2 socket there) and leaves no RDMA device
// and no link behind; in the exclusive boot it refuses, naming the kernel
// release and the mode.
func TestCheckSoftRoCE(t *testing.T) {
	mode := guestBoot(t)
	devsBefore := rdmaDevices(t, rdmaHandle(t, nil))
	before := snapshotGuest(t)
	err := rdma.CheckSoftRoCE(mode)
	switch mode {
	case rdma.NetnsShared:
		if err != nil {
			t.Errorf("CheckSoftRoCE on %s: %v", rdma.KernelRelease(), err)
		}
	default:
		if err == nil || !strings.Contains(err.Error(), "Linux "+rdma.KernelRelease()) || !strings.Contains(err.Error(), "exclusive netns mode") {
			t.Errorf("CheckSoftRoCE in exclusive mode: %v, want a refusal naming the kernel and the mode", err)
		}
	}
	waitFor(t, "the probe's rxe to go with its netns", func() bool {
		return slices.Equal(rdmaDevices(t, rdmaHandle(t, nil)), devsBefore)
	})
	if d := snapshotGuest(t).diff(before); len(d) > 0 {
		t.Errorf("the guest changed:\n%s", strings.Join(d, "\n"))
	}
}
