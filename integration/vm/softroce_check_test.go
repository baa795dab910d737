package vm

import (
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

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
	linksBefore := linkNames(t)
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
	if after := linkNames(t); !slices.Equal(after, linksBefore) {
		t.Errorf("links after the check %v, before %v", after, linksBefore)
	}
}

func linkNames(t *testing.T) []string {
	t.Helper()
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range links {
		names = append(names, l.Attrs().Name)
	}
	slices.Sort(names)
	return names
}
