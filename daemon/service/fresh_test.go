package service

import (
	"context"
	"sync"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestPlanSaysWhetherItsLeasesAreFresh: only the Allocate that made an
// attachment's leases answers Fresh; a repeated or concurrent ADD of the
// attachment, and Check, answer from those leases and say they are not
// theirs to release.
func TestPlanSaysWhetherItsLeasesAreFresh(t *testing.T) {
	tests := []struct {
		name string
		req  api.AllocateRequest
	}{
		{"move", allocReq("s1", "0")},
		{"ipam", api.AllocateRequest{Sandbox: "s1", CNIIfName: "net1", Network: "ipam-net", Mode: api.ModeIPAM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil)
			ctx := context.Background()
			const calls = 10
			fresh := make(chan bool, calls)
			var wg sync.WaitGroup
			for range calls {
				wg.Go(func() {
					plan, err := svc.Allocate(ctx, tt.req)
					if err != nil {
						t.Errorf("allocate: %v", err)
						return
					}
					fresh <- plan.Fresh
				})
			}
			wg.Wait()
			close(fresh)
			n := 0
			for f := range fresh {
				if f {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d of %d concurrent Allocates of one attachment said Fresh, want exactly 1", n, calls)
			}
			checked, err := svc.Check(ctx, api.AttachmentRequest{Sandbox: tt.req.Sandbox, CNIIfName: tt.req.CNIIfName, Network: tt.req.Network})
			if err != nil || checked.Fresh {
				t.Errorf("Check = %+v, %v; want the plan, not fresh", checked, err)
			}
		})
	}
}
