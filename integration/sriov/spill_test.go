package sriov

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestProductSpillByGPU: pods are placed by their GPUs in the real PCIe
// tree (gpu0 beside pf0 under its root port, gpu1 behind the switch with
// pf1), named as Multus' cni-args name them. pf0 has 7 VFs (igb's most):
// seven pods asking for GPU 0 get pf0's VFs, the eighth the next-closest
// PF's (pf1, PHB: only the CPU joins them); with maxDistance PIX the next
// one is refused with CNI code 11 (pf0's VFs may free up) and changes no
// VF, while a pod of GPU 1 under the same bound gets pf1's VF (PIX through
// the switch). DEL gives every VF back as it was.
func TestProductSpillByGPU(t *testing.T) {
	inGuest(t)
	bindGPUStandIn(t)
	pf0, pf1 := rigPFs[0], rigPFs[1]
	const pf0VFs = 7
	setNumVFs(t, pf0.pci, pf0VFs)
	p := startProduct(t)
	before := allVFs(t)
	added := map[string]bool{}
	del := func(sandbox string, conf []byte) {
		if _, err := p.cni("DEL", sandbox, "/run/netns/"+sandbox, conf); err != nil {
			t.Error(err)
		}
		delete(added, sandbox)
	}
	confs := map[string][]byte{}
	add := func(sandbox, gpus string, extra map[string]any) error {
		netns := newPodNetns(t, sandbox)
		conf := gpuArgs(gpus)
		maps.Copy(conf, extra)
		confs[sandbox] = p.vfConf(t, conf)
		if _, err := p.cni("ADD", sandbox, netns, confs[sandbox]); err != nil {
			return err
		}
		added[sandbox] = true
		return nil
	}
	t.Cleanup(func() {
		for sandbox := range added {
			del(sandbox, confs[sandbox])
		}
	})
	// onPF checks that the pod's VF is one of pf's and carries the lease's MAC.
	onPF := func(sandbox string, pf struct{ name, pci string }) {
		t.Helper()
		l := leaseOf(t, p.raild, sandbox)
		if got := vfPF(t, l.VF); got != pf.pci {
			t.Errorf("%s got VF %s of PF %s, want a VF of %s (%s)", sandbox, l.VF, got, pf.name, pf.pci)
			return
		}
		if _, ok := vfWithMAC(t, pf.name, api.LeaseMAC(sandbox, "net1").String()); !ok {
			t.Errorf("no VF of %s carries %s's lease MAC: %s", pf.name, sandbox, pfVFs(t))
		}
		t.Logf("%s: VF %s of %s", sandbox, l.VF, pf.name)
	}
	for i := range pf0VFs {
		sandbox := fmt.Sprintf("spill-%d", i)
		if err := add(sandbox, "0", nil); err != nil {
			t.Fatal(err)
		}
		onPF(sandbox, pf0)
	}
	if err := add("spill-8th", "0", nil); err != nil {
		t.Fatalf("the 8th pod of GPU 0: %v", err)
	}
	onPF("spill-8th", pf1)

	full := pfVFs(t)
	err := add("spill-bound", "0", map[string]any{"maxDistance": "PIX"})
	if err == nil || !strings.Contains(err.Error(), `"code": 11`) || !strings.Contains(err.Error(), "maxDistance PIX") {
		t.Fatalf("ADD of GPU 0 under maxDistance PIX with pf0's VFs held = %v, want CNI code 11 naming the bound", err)
	}
	t.Logf("refusal: %v", err)
	if got := pfVFs(t); got != full {
		t.Errorf("the refused ADD changed VFs:\n%s\nwant:\n%s", got, full)
	}
	if l := p.leases(t); len(l) != pf0VFs+1 {
		t.Errorf("%d leases after the refusal, want %d", len(l), pf0VFs+1)
	}
	if err := add("spill-gpu1", "1", map[string]any{"maxDistance": "PIX"}); err != nil {
		t.Fatalf("GPU 1 under maxDistance PIX: %v", err)
	}
	onPF("spill-gpu1", pf1)

	for sandbox := range maps.Clone(added) {
		del(sandbox, confs[sandbox])
	}
	if after := allVFs(t); after != before {
		t.Errorf("VFs after DEL:\n%s\nwant as before:\n%s", after, before)
	}
	if l := p.leases(t); len(l) != 0 {
		t.Errorf("leases after DEL: %+v", l)
	}
}
