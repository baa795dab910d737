package service

import (
	"context"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// TestVFSweepUnowned: on a PF raild owns (sriov.ownPFs), a VF in the host
// with an admin MAC no lease holds is reset to a clean state, counted and
// no longer reported; a VF a lease holds, one without an admin MAC, one
// bound to vfio-pci, and every VF of a PF raild does not own are left as
// they are (the last only reported when its MAC is a lease's).
func TestVFSweepUnowned(t *testing.T) {
	const leaked = "02:00:00:00:00:aa"
	lost := api.LeaseMAC("lost", "rail0").String()
	tests := []struct {
		name        string
		own         func(m *topology.Machine) []string
		failing     bool
		wantCleaned func(m *topology.Machine) []vfPlace
		wantLeaked  func(m *topology.Machine) []string // PCI addresses reported
	}{
		{name: "default: nothing owned, only reported", own: func(*topology.Machine) []string { return nil },
			wantLeaked: func(m *topology.Machine) []string { return []string{m.PFs[1].VFs[0].PCI} }},
		{name: "owned PF by NIC and by netdev", own: func(m *topology.Machine) []string {
			nic, _ := m.PFNIC(m.PFs[0])
			return []string{nic.Name, m.PFs[1].Netdev}
		}, wantCleaned: func(m *topology.Machine) []vfPlace {
			return []vfPlace{{m.PFs[0].Netdev, m.PFs[0].VFs[2].Index}, {m.PFs[1].Netdev, m.PFs[1].VFs[0].Index}}
		}},
		{name: "only the PF named", own: func(m *topology.Machine) []string { return []string{m.PFs[0].PCI} },
			wantCleaned: func(m *topology.Machine) []vfPlace { return []vfPlace{{m.PFs[0].Netdev, m.PFs[0].VFs[2].Index}} },
			wantLeaked:  func(m *topology.Machine) []string { return []string{m.PFs[1].VFs[0].PCI} }},
		{name: "a reset that fails leaves it reported", failing: true,
			own:        func(m *topology.Machine) []string { return []string{m.PFs[1].PCI} },
			wantLeaked: func(m *topology.Machine) []string { return []string{m.PFs[1].VFs[0].PCI} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeHostVFs{macs: map[string]map[int]string{}, failing: tt.failing}
			reg := metrics.New()
			var owned []string
			svc, _ := newService(t, "h100x8-cx7x8-sriov", onePool(), nil, func(o *Options) {
				o.HostVFs, o.Metrics = fake, reg
				m := o.Machine()
				owned = tt.own(m)
				o.OwnPFs = owned
				for _, pf := range m.PFs {
					fake.macs[pf.Netdev] = map[int]string{}
					for _, vf := range pf.VFs {
						fake.macs[pf.Netdev][vf.Index] = "00:00:00:00:00:00"
					}
				}
			})
			m := svc.Machine()
			// PF 0: VF 0 held by a live pod with its lease MAC, VF 2 with
			// a MAC set by someone else, no lease. PF 1: VF 0 with a lease
			// MAC no lease holds. PF 6: its vfio-pci VF with a MAC (a VM's).
			req := allocReq("live", "0")
			req.Mode, req.Selector.NICs = api.ModeVF, []string{m.PFs[0].VFs[0].PCI}
			plan, err := svc.Allocate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			fake.macs[m.PFs[0].Netdev][m.PFs[0].VFs[0].Index] = plan.Interfaces[0].VF.MAC
			fake.macs[m.PFs[0].Netdev][m.PFs[0].VFs[2].Index] = leaked
			fake.macs[m.PFs[1].Netdev][m.PFs[1].VFs[0].Index] = lost
			vfio := vfioVF(t, m)
			fake.macs[vfio.pf][vfio.index] = "02:00:00:00:00:bb"
			owned = append(owned, vfio.pf)
			svc.opt.OwnPFs = owned

			if err := svc.Reconcile(); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			var want []vfPlace
			if tt.wantCleaned != nil {
				want = tt.wantCleaned(m)
			}
			if !slices.Equal(fake.cleaned, want) {
				t.Fatalf("reset %v, want %v", fake.cleaned, want)
			}
			for _, p := range want {
				if got := testutil.ToFloat64(reg.VFResets.WithLabelValues(p.pf, "unowned")); got != 1 {
					t.Errorf("rail_vf_resets_total{pf=%s,reason=unowned} = %v, want 1", p.pf, got)
				}
			}
			var leakedPCI, wantLeaked []string
			for _, l := range svc.LeakedVFs() {
				leakedPCI = append(leakedPCI, l.PCI)
			}
			if tt.wantLeaked != nil {
				wantLeaked = tt.wantLeaked(m)
			}
			if !slices.Equal(leakedPCI, wantLeaked) {
				t.Errorf("reported %v, want %v", leakedPCI, wantLeaked)
			}
			if got := fake.macs[vfio.pf][vfio.index]; got != "02:00:00:00:00:bb" {
				t.Errorf("the vfio-pci VF's MAC is %s: a VM's VF must be left alone", got)
			}
		})
	}
}

// vfioVF is the machine's VF bound to vfio-pci.
func vfioVF(t *testing.T, m *topology.Machine) vfPlace {
	for _, pf := range m.PFs {
		for _, vf := range pf.VFs {
			if vf.Driver == topology.VFIODriver {
				return vfPlace{pf.Netdev, vf.Index}
			}
		}
	}
	t.Fatal("the machine has no vfio-pci VF")
	return vfPlace{}
}
