package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// TestAllocateVFPlan: a vf-mode ADD gets a plan that names the VF (its
// PCI address, index, PF netdev, own netdev and RDMA device) and the
// lease's stable admin MAC, and on an InfiniBand PF the lease's GUID; a
// repeated ADD gets the same.
func TestAllocateVFPlan(t *testing.T) {
	for _, machine := range []string{"h100x8-cx7x8-sriov", "h100x2-cx7ib-sriov"} {
		t.Run(machine, func(t *testing.T) { testAllocateVFPlan(t, machine) })
	}
}

func testAllocateVFPlan(t *testing.T, machine string) {
	svc, _ := newService(t, machine, onePool(), nil)
	req := allocReq("a", "0")
	req.Mode = api.ModeVF
	plan, err := svc.Allocate(context.Background(), req)
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	if plan.Mode != api.ModeVF || len(plan.Interfaces) != 1 {
		t.Fatalf("plan %+v, want one vf interface", plan)
	}
	iface := plan.Interfaces[0]
	vf, ok := svc.Machine().VFByPCI(iface.VF.PCI)
	if !ok {
		t.Fatalf("plan VF %+v is none of the node's", iface.VF)
	}
	pf, _ := svc.Machine().PFByPCI(vf.PF)
	want := api.VF{PCI: vf.PCI, Index: vf.Index, PFPCI: vf.PF, PF: pf.Netdev, Netdev: vf.Netdev, Driver: vf.Driver,
		RDMADevice: vf.RDMA, MAC: api.LeaseMAC("a", iface.Name).String()}
	pfNIC, _ := svc.Machine().PFNIC(pf)
	if pfNIC.LinkLayer == topology.InfiniBand {
		want.GUID = api.LeaseGUID("a", iface.Name).String()
	}
	if iface.NIC == nil || iface.NIC.LinkLayer != pfNIC.LinkLayer {
		t.Fatalf("plan NIC %+v, want the PF's link layer %q", iface.NIC, pfNIC.LinkLayer)
	}
	if *iface.VF != want || pf.Netdev == "" || vf.Netdev == "" {
		t.Fatalf("plan VF %+v, want %+v", *iface.VF, want)
	}
	if iface.NIC == nil || iface.NIC.PCI != vf.PCI || iface.NIC.Netdev != vf.Netdev || iface.NIC.RDMADevice != vf.RDMA {
		t.Fatalf("plan NIC %+v, want the VF %+v", iface.NIC, vf)
	}
	again, err := svc.Allocate(context.Background(), req)
	if err != nil || *again.Interfaces[0].VF != want {
		t.Fatalf("repeated Allocate = %+v, %v; want the same VF", again, err)
	}
}

// TestConcurrentVFPlacement: many ADDs at once in vf mode never hold one VF twice; each
// gets a VF of the PF closest to its GPU while one is free, and once the
// node's 27 attachable VFs are held the rest are told to try again later
// (code 11: a held VF may free up).
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
			_, errs[i] = svc.allocateNICs(req, svc.view(), "", []int{i % 8})
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
		case errors.As(err, &apiErr) && apiErr.Code == api.CodeTryAgainLater && len(leases) == 0:
			// Every VF is held by a pod: one may free up (CNI code 11).
			continue
		default:
			t.Fatalf("pod %d: %v, leases %+v", i, err, leases)
		}
		vf, ok := m.VFByPCI(leases[0].VF)
		if !ok || leases[0].Mode != string(api.ModeVF) {
			t.Fatalf("pod %d holds VF %q in mode %s: not a VF", i, leases[0].VF, leases[0].Mode)
		}
		if pf, _ := m.PFByPCI(vf.PF); len(leases[0].NICs) != 1 || leases[0].NICs[0] != pfPort(t, m, pf) {
			t.Fatalf("pod %d holds VF %s on NICs %v, want its PF's port", i, vf.PCI, leases[0].NICs)
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

// TestVFNoFreeVFCodes: a pod that finds no VF is told to try again later
// (code 11) only when pods hold the VFs it could get; a PF without VFs
// (sriov_numvfs 0) is a plain refusal (no NIC), which a retry cannot cure.
func TestVFNoFreeVFCodes(t *testing.T) {
	tests := []struct {
		name     string
		pf       string
		hold     int // ADDs that take VFs of the PF first
		wantCode uint
	}{
		{"all 4 VFs of mlx5_0 held", "mlx5_0", 4, api.CodeTryAgainLater},
		{"mlx5_7 has sriov_numvfs 0", "mlx5_7", 0, api.CodeNoNIC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(t, "h100x8-cx7x8-sriov", onePool(), nil)
			ask := func(sandbox string) error {
				req := allocReq(sandbox, "0")
				req.Mode, req.Selector.NICs = api.ModeVF, []string{tt.pf}
				_, err := svc.Allocate(context.Background(), req)
				return err
			}
			for i := range tt.hold {
				if err := ask(fmt.Sprintf("holder%d", i)); err != nil {
					t.Fatalf("ADD %d: %v", i, err)
				}
			}
			var apiErr *api.Error
			if err := ask("late"); !errors.As(err, &apiErr) || apiErr.Code != tt.wantCode {
				t.Fatalf("ADD = %v, want code %d", err, tt.wantCode)
			}
			t.Logf("refusal: %v", apiErr)
		})
	}
}

// TestVFPinnedByDeviceID: a NAD whose resourceName is an SR-IOV device
// plugin pool gets the allocated VF's PCI address from Multus (deviceID,
// the selector's Device; a plugin before it sent it in nics): the pod gets
// exactly that VF, or a refusal that says why and names deviceID when the
// device is no NIC or VF of the node.
func TestVFPinnedByDeviceID(t *testing.T) {
	for _, via := range []string{"device", "nics"} {
		t.Run(via, func(t *testing.T) {
			svc, spec := newService(t, "h100x8-cx7x8-sriov", onePool(), nil)
			far := spec.PFs[5].VFs[2].PCI  // a VF of a PF far from GPU 0
			vfio := spec.PFs[6].VFs[3].PCI // bound to vfio-pci
			ask := func(sandbox, device string) (*api.Plan, error) {
				req := allocReq(sandbox, "0")
				req.Mode = api.ModeVF
				if via == "device" {
					req.Selector.Device = strings.ToLower(device)
				} else {
					req.Selector.NICs = []string{strings.ToUpper(device)}
				}
				return svc.Allocate(context.Background(), req)
			}
			plan, err := ask("a", far)
			if err != nil || plan.Interfaces[0].VF.PCI != far {
				t.Fatalf("Allocate = %+v, %v; want exactly VF %s", plan, err, far)
			}
			var apiErr *api.Error
			if _, err := ask("b", far); !errors.As(err, &apiErr) || apiErr.Code != api.CodeTryAgainLater {
				t.Fatalf("the same VF for another pod: %v, want code 11 (held)", err)
			}
			if _, err := ask("c", vfio); !errors.As(err, &apiErr) || apiErr.Code != api.CodeNoNIC ||
				!strings.Contains(apiErr.Error(), vfio+" bound to vfio-pci") {
				t.Fatalf("a vfio-pci VF: %v, want no NIC naming it", err)
			}
			field := map[string]string{"device": "deviceID", "nics": "nics"}[via]
			if _, err := ask("d", "0000:ee:00.0"); err == nil || !strings.Contains(err.Error(), field) ||
				(via == "device" && strings.Contains(err.Error(), "nics:")) ||
				!strings.Contains(strings.ToLower(err.Error()), "0000:ee:00.0") {
				t.Fatalf("a device the node does not have: %v, want an error naming %s and the address", err, field)
			}
		})
	}
}

// TestReleaseReadsWhatReturned: a DEL put its VF, or its moved NIC's
// netdev, back in the host before it released the lease; raild has the
// inventory read that VF or NIC again, so the next ADD finds it free and
// named (the SR-IOV rig's ADD right after a DEL was refused: the snapshot
// still showed the VF in the pod; the chaos soak's move ADD right after a
// DEL found "mlx5_0 no netdev"). A release of a mode that moves nothing
// reads nothing.
func TestReleaseReadsWhatReturned(t *testing.T) {
	for _, mode := range []api.Mode{api.ModeVF, api.ModeMove, api.ModeMacvlan} {
		t.Run(string(mode), func(t *testing.T) {
			reads := make(chan map[string][]string, 4)
			nicReads := make(chan []string, 4)
			svc, _ := newService(t, "h100x8-cx7x8-sriov", onePool(), nil, func(o *Options) {
				o.ReadVFs = func(_ string, vfs map[string][]string) { reads <- vfs }
				o.ReadNICsBack = func(_ string, devices []string) { nicReads <- devices }
			})
			req := allocReq("a", "0")
			req.Mode = mode
			plan, err := svc.Allocate(context.Background(), req)
			if err != nil {
				t.Fatalf("Allocate: %v", err)
			}
			if err := svc.Release(context.Background(), api.AttachmentRequest{Sandbox: "a", CNIIfName: req.CNIIfName, Network: req.Network}); err != nil {
				t.Fatalf("Release: %v", err)
			}
			svc.awaitReturns()
			wantVFs, wantNICs := 0, 0
			switch mode {
			case api.ModeVF:
				wantVFs = 1
			case api.ModeMove:
				wantNICs = 1
			}
			if len(reads) != wantVFs || len(nicReads) != wantNICs {
				t.Fatalf("a %s release: %d VF reads, %d NIC reads; want %d, %d", mode, len(reads), len(nicReads), wantVFs, wantNICs)
			}
			switch mode {
			case api.ModeVF:
				vf := plan.Interfaces[0].VF
				if got := <-reads; !slices.Equal(got[vf.PFPCI], []string{vf.PCI}) || len(got) != 1 {
					t.Fatalf("read %v, want the released VF %s of %s", got, vf.PCI, vf.PFPCI)
				}
			case api.ModeMove:
				if got := <-nicReads; !slices.Equal(got, []string{plan.Interfaces[0].NIC.RDMADevice}) {
					t.Fatalf("read %v, want the released NIC's device %s", got, plan.Interfaces[0].NIC.RDMADevice)
				}
			}
		})
	}
}

// TestReleaseAnswersBeforeTheVFRead: a DEL does not wait for raild to read
// its VF again (sysfs, then a snapshot published: tens of milliseconds in
// the SR-IOV rig's guest, a quarter of rail's DEL above the floor), and
// the next vf-mode ADD places only once that read is done, so it still
// finds the VF free.
func TestReleaseAnswersBeforeTheVFRead(t *testing.T) {
	proceed := make(chan struct{})
	var mu sync.Mutex
	var order []string
	note := func(what string) { mu.Lock(); order = append(order, what); mu.Unlock() }
	svc, _ := newService(t, "h100x8-cx7x8-sriov", onePool(), nil, func(o *Options) {
		o.ReadVFs = func(string, map[string][]string) { <-proceed; note("VF read") }
	})
	req := allocReq("a", "0")
	req.Mode = api.ModeVF
	if _, err := svc.Allocate(context.Background(), req); err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	released := make(chan error, 1)
	go func() {
		released <- svc.Release(context.Background(), api.AttachmentRequest{Sandbox: "a", CNIIfName: req.CNIIfName, Network: req.Network})
	}()
	select {
	case err := <-released:
		if err != nil {
			t.Fatalf("Release: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(proceed)
		t.Fatal("Release waited for the VF's read")
	}
	next := allocReq("b", "0")
	next.Mode = api.ModeVF
	allocated := make(chan error, 1)
	go func() {
		_, err := svc.Allocate(context.Background(), next)
		note("next ADD placed")
		allocated <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the ADD reach the wait, if it waits
	close(proceed)
	if err := <-allocated; err != nil {
		t.Fatalf("the next ADD: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(order, []string{"VF read", "next ADD placed"}) {
		t.Fatalf("order %v: the next vf-mode ADD placed before the released VF was read", order)
	}
}

// pfPort is the name of the port that stands for pf in placement.
func pfPort(t *testing.T, m *topology.Machine, pf topology.PF) string {
	t.Helper()
	nic, ok := m.PFNIC(pf)
	if !ok {
		t.Fatalf("PF %s has no port", pf.PCI)
	}
	return nic.Name
}
