package service

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// newVFMACService is a service on the SR-IOV machine whose VFs carry no
// admin MAC but those set, by PF netdev and VF index.
func newVFMACService(t *testing.T, set func(m *topology.Machine, macs map[string]map[int]string)) *Service {
	fake := &fakeHostVFs{macs: map[string]map[int]string{}}
	svc, _ := newService(t, "h100x8-cx7x8-sriov", onePool(), nil, func(o *Options) {
		o.HostVFs = fake
		m := o.Machine()
		for _, pf := range m.PFs {
			fake.macs[pf.Netdev] = map[int]string{}
			for _, vf := range pf.VFs {
				fake.macs[pf.Netdev][vf.Index] = "00:00:00:00:00:00"
			}
		}
		if set != nil {
			set(m, fake.macs)
		}
	})
	return svc
}

func vfReq(sandbox, mac string) api.AllocateRequest {
	req := allocReq(sandbox, "0")
	req.Mode, req.MAC = api.ModeVF, mac
	return req
}

// TestVFMACsNeverShared: raild refuses an ADD whose VF would carry an
// admin MAC another VF of the node carries or another lease gives its VF,
// naming the field and the fix; the VF the ADD takes may carry it already.
func TestVFMACsNeverShared(t *testing.T) {
	const asked = "02:00:00:00:00:01"
	tests := []struct {
		name     string
		set      func(m *topology.Machine, macs map[string]map[int]string)
		first    api.AllocateRequest // made before (zero: none)
		req      func(m *topology.Machine) api.AllocateRequest
		wantCode uint
		wantText string
	}{
		{name: "a MAC another lease asked", first: vfReq("a", asked),
			req: func(*topology.Machine) api.AllocateRequest { return vfReq("b", asked) }, wantCode: api.CodeInvalidConfig, wantText: "already the VF's of pod default/pod-a"},
		{name: "a MAC another VF of the node carries", set: func(m *topology.Machine, macs map[string]map[int]string) {
			macs[m.PFs[5].Netdev][m.PFs[5].VFs[1].Index] = asked
		}, req: func(*topology.Machine) api.AllocateRequest { return vfReq("b", asked) }, wantCode: api.CodeInvalidConfig, wantText: "already VF 1 of"},
		{name: "the VF taken may carry it already", set: func(m *topology.Machine, macs map[string]map[int]string) {
			macs[m.PFs[0].Netdev][m.PFs[0].VFs[1].Index] = asked
		}, req: func(m *topology.Machine) api.AllocateRequest {
			r := vfReq("b", asked)
			r.Selector.NICs = []string{m.PFs[0].VFs[1].PCI}
			return r
		}},
		{name: "lease MACs of two pods", first: vfReq("a", ""),
			req: func(*topology.Machine) api.AllocateRequest { return vfReq("b", "") }},
		{name: "a lease's own MAC another lease asked", first: vfReq("a", api.LeaseMAC("b", "rail0").String()),
			req: func(*topology.Machine) api.AllocateRequest { return vfReq("b", "") }, wantCode: api.CodeTryAgainLater, wantText: "a new sandbox gets another"},
		{name: "one mac for two VFs", req: func(*topology.Machine) api.AllocateRequest {
			r := vfReq("b", asked)
			r.Annotations[api.AnnotationGPUs] = "0,7"
			return r
		}, wantCode: api.CodeInvalidConfig, wantText: `set "maxNICs": 1`},
		{name: "mac outside vf mode", req: func(*topology.Machine) api.AllocateRequest {
			r := vfReq("b", asked)
			r.Mode = api.ModeMove
			return r
		}, wantCode: api.CodeInvalidConfig, wantText: "is a vf mode key"},
		{name: "mac not as raild writes it", req: func(*topology.Machine) api.AllocateRequest { return vfReq("b", "02:00:00:00:00:AB") },
			wantCode: api.CodeInvalidConfig, wantText: "lower case"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := newVFMACService(t, tt.set)
			if tt.first.Sandbox != "" {
				if _, err := svc.Allocate(context.Background(), tt.first); err != nil {
					t.Fatal(err)
				}
			}
			req := tt.req(svc.Machine())
			plan, err := svc.Allocate(context.Background(), req)
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if want := leaseVFMAC(req.Sandbox, "rail0", req.MAC); plan.Interfaces[0].VF.MAC != want {
					t.Fatalf("plan's VF MAC %s, want %s", plan.Interfaces[0].VF.MAC, want)
				}
				return
			}
			if !api.IsCode(err, tt.wantCode) || !strings.Contains(err.Error(), tt.wantText) || len(svc.SandboxLeases(req.Sandbox)) != 0 {
				t.Fatalf("got %v (leases %v), want code %d saying %q and no lease", err, svc.SandboxLeases(req.Sandbox), tt.wantCode, tt.wantText)
			}
		})
	}
}

// TestVFMACConcurrent: ADDs asking one MAC at once: exactly one gets it.
func TestVFMACConcurrent(t *testing.T) {
	svc := newVFMACService(t, nil)
	const pods = 8
	var wg sync.WaitGroup
	errs := make([]error, pods)
	for i := range pods {
		wg.Go(func() {
			_, errs[i] = svc.Allocate(context.Background(), vfReq(fmt.Sprintf("sb%d", i), "02:00:00:00:00:01"))
		})
	}
	wg.Wait()
	got := 0
	for i, err := range errs {
		switch {
		case err == nil:
			got++
		case !api.IsCode(err, api.CodeInvalidConfig):
			t.Fatalf("pod %d: %v, want code 7 for a MAC taken", i, err)
		}
	}
	if got != 1 {
		t.Fatalf("%d ADDs got the MAC, want exactly 1", got)
	}
}
