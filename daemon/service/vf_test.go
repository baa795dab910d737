package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestAllocateRefusesVFMode: until the VF attach sequence exists, raild
// refuses vf mode at ADD, saying so.
func TestAllocateRefusesVFMode(t *testing.T) {
	svc, _ := newService(t, "h100x8-cx7x8-sriov", onePool(), nil)
	req := allocReq("a", "0")
	req.Mode = api.ModeVF
	_, err := svc.Allocate(context.Background(), req)
	var apiErr *api.Error
	if !errors.As(err, &apiErr) || apiErr.Code != api.CodeInvalidConfig || !strings.Contains(apiErr.Error(), "mode vf is not yet supported") {
		t.Fatalf("got %v, want invalid config: mode vf is not yet supported", err)
	}
}

// TestConcurrentVFPlacement: many ADDs at once in vf mode (past
// validation, the path vf mode will take) never hold one VF twice; each
// gets a VF of the PF closest to its GPU while one is free, and once the
// node's 27 attachable VFs are held the rest are refused as having no NIC.
func TestConcurrentVFPlacement(t *testing.T) {
	svc, _ := newService(t, "h100x8-cx7x8-sriov", onePool(), nil)
	m := svc.Machine()
	const pods = 40
	var wg sync.WaitGroup
	errs := make([]error, pods)
	for i := range pods {
		wg.Go(func() {
			req := allocReq(fmt.Sprintf("sb%d", i), fmt.Sprint(i%8))
			req.Mode = api.ModeVF
			_, errs[i] = svc.allocateNICs(req, "", []int{i % 8})
		})
	}
	wg.Wait()
	holders := map[string]string{}
	placed := 0
	for i, err := range errs {
		sandbox := fmt.Sprintf("sb%d", i)
		leases := svc.SandboxLeases(sandbox)
		var apiErr *api.Error
		switch {
		case err == nil && len(leases) == 1:
			placed++
		case errors.As(err, &apiErr) && apiErr.Code == api.CodeNoNIC && len(leases) == 0:
			continue
		default:
			t.Fatalf("pod %d: %v, leases %+v", i, err, leases)
		}
		vf, ok := m.VFByPCI(leases[0].NICs[0])
		if !ok || leases[0].Mode != string(api.ModeVF) {
			t.Fatalf("pod %d holds %v in mode %s: not a VF", i, leases[0].NICs, leases[0].Mode)
		}
		if other, twice := holders[vf.PCI]; twice {
			t.Fatalf("VF %s held by %s and %s", vf.PCI, other, sandbox)
		}
		holders[vf.PCI] = sandbox
		if vf.Attachable() != "" {
			t.Errorf("pod %d got VF %s: %s", i, vf.PCI, vf.Attachable())
		}
	}
	if placed != 27 {
		t.Fatalf("%d pods placed, want the node's 27 attachable VFs", placed)
	}
}
