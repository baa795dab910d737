package service

import (
	"slices"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
)

// TestSoftRoCEPlanAndSweep: on a softRoCE node each planned interface
// names the rxe of its lease (none on other nodes), and the start-up sweep
// keeps exactly the leases' devices: a device whose lease went (DEL, GC)
// is stale, a repeated listing is reported once.
func TestSoftRoCEPlanAndSweep(t *testing.T) {
	for _, soft := range []bool{true, false} {
		svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil, func(o *Options) { o.SoftRoCE = soft })
		req := allocReq("a", "0,2")
		plan, err := svc.Allocate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, i := range plan.Interfaces {
			want := ""
			if soft {
				want = rdma.SoftRoCEName("a", i.Name)
			}
			if i.SoftRoCE != want {
				t.Errorf("softRoCE %v: interface %s names rxe %q, want %q", soft, i.Name, i.SoftRoCE, want)
			}
			names = append(names, rdma.SoftRoCEName("a", i.Name))
		}
		if len(names) != 2 {
			t.Fatalf("plan %+v: want two interfaces", plan.Interfaces)
		}
		gone := rdma.SoftRoCEName("b", "rail0")
		listed := append(slices.Clone(names), gone, gone)
		if stale := svc.StaleSoftRoCE(listed); !slices.Equal(stale, []string{gone}) {
			t.Errorf("softRoCE %v: stale %v, want [%s]", soft, stale, gone)
		}
		if err := svc.Release(t.Context(), api.AttachmentRequest{Sandbox: "a", CNIIfName: "eth0", Network: "net"}); err != nil {
			t.Fatal(err)
		}
		if stale := svc.StaleSoftRoCE(names); !slices.Equal(stale, names) {
			t.Errorf("softRoCE %v: after release, stale %v, want %v", soft, stale, names)
		}
	}
}
