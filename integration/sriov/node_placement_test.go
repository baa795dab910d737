package sriov

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// TestNodeVFByGPU runs the product as a node runs it (containerd + NRI +
// runc, raild on the guest's real sysfs, the chain ptp → rail in vf mode,
// pods from crictl) and places three pods by their GPUs (the rail.dev/gpus
// annotation): the pod of GPU 0 gets a VF of pf0 (beside it under one root
// port), the pods of GPU 1 VFs of pf1 (behind the switch with it). Each VF
// carries the lease's MAC and the chain's VLAN, QoS, spoofchk, trust and
// rate as its PF reports them; a container sees its VF; raild reports the
// pod ready (rail.dev/RDMAReady) and names the GPU it was placed by; pods
// on pf0's and pf1's VFs talk over VLAN 100 on the wire. Removing the pods
// restores every VF.
func TestNodeVFByGPU(t *testing.T) {
	inGuest(t)
	bindGPUStandIn(t)
	addPFRxes(t)
	before := allVFs(t)
	n := startCRINode(t)
	pods := []struct {
		name string
		gpu  int
		pf   struct{ name, pci string }
		app  bool // runs a container (the first two ping each other)
	}{
		// Spreading alone would give the first pod pf0 (the first PF by
		// name, both idle) and the third pf0 (both PFs hold one VF then):
		// only the GPUs send them to pf1.
		{"gpu1-a", 1, rigPFs[1], true}, {"gpu0", 0, rigPFs[0], true}, {"gpu1-b", 1, rigPFs[1], false},
	}
	var addrs, ctrs []string
	for _, pod := range pods {
		id, config := n.runPod(t, pod.name, map[string]string{api.AnnotationGPUs: strconv.Itoa(pod.gpu)})
		l := leaseOf(t, n.raild, id)
		vf := l.VF
		if got := vfPF(t, vf); got != pod.pf.pci {
			t.Fatalf("pod %s (GPU %d) got VF %s of PF %s, want a VF of %s (%s)", pod.name, pod.gpu, vf, got, pod.pf.name, pod.pf.pci)
		}
		mac := api.LeaseMAC(id, l.IfName).String()
		v, ok := vfWithMAC(t, pod.pf.name, mac)
		if !ok {
			t.Fatalf("no VF of %s carries the lease's MAC %s: %s", pod.pf.name, mac, pfVFs(t))
		}
		want := fmt.Sprintf("mac %s vlan 100 qos 3 max_tx 100 min_tx 0 spoofchk false link_state auto trust true", mac)
		if v.String() != want {
			t.Errorf("%s VF %d: %s, want %s", pod.pf.name, v.VF, v, want)
		}
		if pod.app {
			ctr := n.startContainer(t, id, config, pod.name+"-app")
			dev := n.mustCrictl(t, "exec", ctr, "readlink", "/sys/class/net/"+l.IfName+"/device")
			if filepath.Base(dev) != vf {
				t.Errorf("in pod %s's container %s is %q, want the VF %s", pod.name, l.IfName, dev, vf)
			}
			addr, _, _ := strings.Cut(l.Address, "/")
			addrs, ctrs = append(addrs, addr), append(ctrs, ctr)
		}
		n.waitReady(t, pod.name, rigGPUs[pod.gpu].pci)
		t.Logf("pod %s (GPU %d): %s %s = VF %d of %s (%s)", pod.name, pod.gpu, l.IfName, l.Address, v.VF, pod.pf.name, vf)
	}
	if out, err := n.crictl("exec", ctrs[0], "ping", "-c", "3", "-W", "3", addrs[1]); err != nil {
		t.Errorf("the pods cannot talk over their VFs: %v: %s", err, out)
	} else {
		t.Logf("ping: %s", lastLine(out))
	}
	n.mustCrictl(t, "rmp", "-fa")
	if leases := raildLeases(t, n.raild); len(leases) != 0 {
		t.Errorf("leases after the pods were removed: %+v", leases)
	}
	if after := allVFs(t); after != before {
		t.Errorf("VFs after the pods were removed:\n%s\nwant as before:\n%s", after, before)
	}
}

// waitReady waits until raild's readiness report of pod says ready (its
// tracker runs every 5 s and on NRI's container starts) and checks that it
// names the GPU at gpuPCI as the one the pod was placed by.
func (n *criNode) waitReady(t *testing.T, pod, gpuPCI string) {
	t.Helper()
	c := api.NewClient(n.raild.Socket, 5*time.Second)
	var rep *api.PodReport
	var err error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if rep, err = c.PodReport(context.Background(), "sriov", pod); err == nil && rep.Ready {
			break
		}
	}
	if err != nil || rep == nil || !rep.Ready {
		t.Fatalf("raild's report of pod %s: %+v, %v: want ready", pod, rep, err)
	}
	if len(rep.GPUs) != 1 || rep.GPUs[0].PCI != gpuPCI {
		t.Errorf("raild's report of pod %s names GPUs %+v, want the one at %s", pod, rep.GPUs, gpuPCI)
	}
	var checks []string
	for _, ch := range rep.Checks {
		checks = append(checks, fmt.Sprintf("%s %s", ch.Name, ch.Status))
	}
	t.Logf("pod %s ready: %s", pod, strings.Join(checks, ", "))
}
