package vm

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// unknownNIC is what raild's NRI plugin logs for a leased NIC its
// snapshot lacks.
const unknownNIC = "leased NIC unknown to this node's topology"

// checkKnown: the restarted raild's `topo --json` lists the NIC under its
// host netdev, held by the pod, and `doctor` reports it in the pod, gone
// from the host; the new run logged nothing unknown.
func (r *restartNode) checkKnown(t *testing.T, logFrom int) {
	var report topology.Report
	if err := json.Unmarshal([]byte(r.n.raildCLI(t, "topo", "--json")), &report); err != nil {
		t.Fatalf("raild topo --json: %v", err)
	}
	i := slices.IndexFunc(report.NICs, func(n topology.NIC) bool { return n.Name == r.dev })
	switch {
	case i < 0:
		t.Errorf("raild topo lists no %s (NICs: %v)", r.dev, nicNames(report.NICs))
	case report.NICs[i].Netdev != r.nic || report.NICs[i].UverbsName == "":
		t.Errorf("raild topo shows %s on netdev %q with uverbs %q, want %s and its uverbs",
			r.dev, report.NICs[i].Netdev, report.NICs[i].UverbsName, r.nic)
	}
	if got := report.Holders[r.dev]; got != r.holderName {
		t.Errorf("raild topo: %s held by %q, want %q (holders %v)", r.dev, got, r.holderName, report.Holders)
	}
	doctor := r.n.raildCLI(t, "doctor", "--root", "/", "--cni-bin-dir", r.n.railBin, "--nri-socket", r.n.nriSocket())
	want := fmt.Sprintf("[OK  ] %s (%s) sits in pod %s: gone from the host, known to raild", r.dev, r.nic, r.holderName)
	if !strings.Contains(doctor, want) {
		t.Errorf("raild doctor does not say %q:\n%s", want, doctor)
	}
	for _, line := range strings.Split(doctor, "\n") {
		if strings.Contains(line, r.dev) && !strings.HasPrefix(line, "[OK") {
			t.Errorf("raild doctor: %s", line)
		}
	}
	if log := readText(r.n.raildLog)[logFrom:]; strings.Contains(log, unknownNIC) {
		t.Errorf("the restarted raild logged %q:\n%s", unknownNIC, lastLines(log, 20))
	}
}

// checkNewContainer starts a container in the pod and checks it got
// exactly the NIC's device nodes and opens the RDMA device, and that raild
// did not skip the NIC as unknown.
func (r *restartNode) checkNewContainer(t *testing.T, name string) {
	logFrom := len(readText(r.n.raildLog))
	ctr := r.held.startContainer(t, name, verbsImage)
	v := r.n.probe(t, ctr, r.dev)
	r.checkReady(t, name)
	r.held.removeContainer(t, ctr)
	if !maps.Equal(v.nodes, r.nodes) {
		t.Errorf("/dev/infiniband in container %s: %v, want exactly the guest's %v", name, v.nodes, r.nodes)
	}
	if v.devinfoErr || !strings.Contains(v.devinfo, "hca_id:\t"+r.dev) {
		t.Errorf("ibv_devinfo -d %s in container %s failed:\n%s", r.dev, name, v.devinfo)
	}
	if log := readText(r.n.raildLog)[logFrom:]; strings.Contains(log, unknownNIC) {
		t.Errorf("raild logged %q for container %s:\n%s", unknownNIC, name, lastLines(log, 20))
	}
}

// checkReady: `raild doctor --pod` with container name running: rail0 in
// the pod, up, with its lease address; the rxe in the pod's netns (the
// rdma-netns check, through the kernel's RDMA netlink); its port hidden
// from the host's sysfs (exclusive mode: the port check is skipped, not
// failed); the container's device nodes and memlock read from its own
// /proc; the pod ready.
func (r *restartNode) checkReady(t *testing.T, name string) {
	subject := "container " + name
	rep := r.held.waitReport(t, subject+"'s process and every check passing", func(rep *api.PodReport) bool {
		return startedIn(rep, name) && rep.Ready
	})
	ifn := r.held.leaseOf(t).ifName
	for _, check := range []string{"interface", "address", "rdma-netns"} {
		wantCheck(t, rep, check, ifn, api.CheckPass, "")
	}
	wantCheck(t, rep, "port", ifn, api.CheckSkip, "")
	for _, check := range []string{"device-nodes", "memlock"} {
		wantCheck(t, rep, check, subject, api.CheckPass, "")
	}
	c, _ := containerOf(rep, name)
	var want []string
	for node := range r.nodes {
		want = append(want, "/dev/infiniband/"+node)
	}
	slices.Sort(want)
	if got := slices.Sorted(slices.Values(c.Present)); !slices.Equal(got, want) {
		t.Errorf("doctor --pod: %s holds %v, want %v", subject, got, want)
	}
	t.Logf("%s's NCCL/UCX env as raild reads it: %v", subject, c.Env)
}

// checkTeardown: CNI DEL (stopp) puts the NIC back in the guest's netns
// under its name, MTU and state and the RDMA device with it, and frees the
// lease; after pod removal the guest is as it was before the pod.
func (r *restartNode) checkTeardown(t *testing.T) {
	netns := r.held.netnsPath(t)
	r.held.stop(t)
	if left := r.n.leases(t); len(left) != 0 {
		t.Errorf("leases left after DEL: %+v", left)
	}
	if _, err := netlink.LinkByName(r.nic); err != nil {
		t.Fatalf("%s is not back in the guest's netns under its name: %v", r.nic, err)
	}
	if after := hostLinkState(t, r.nic); after != r.nicBefore {
		t.Errorf("after DEL %s is %+v, want %+v as before the pod", r.nic, after, r.nicBefore)
	}
	if !slices.Contains(rdmaDevices(t, rdmaHandle(t, nil)), r.dev) {
		t.Errorf("after DEL the guest's netns does not see %s", r.dev)
	}
	r.held.remove(t)
	assertGone(t, netns)
	r.unpair()
	if d := snapshotGuest(t).diff(r.before); len(d) > 0 {
		t.Errorf("the guest changed:\n%s", strings.Join(d, "\n"))
	}
}

func nicNames(nics []topology.NIC) []string {
	names := make([]string, len(nics))
	for i, n := range nics {
		names[i] = n.Name
	}
	return names
}
