package sriov

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// product is raild (on the guest's real sysfs, an rxe on each PF's netdev
// to place the PF by) and the rail plugin exec'd as a runtime would.
type product struct {
	bin   string
	raild *harness.Raild
}

func startProduct(t *testing.T) *product {
	t.Helper()
	bin := os.Getenv("RAIL_SRIOV_BIN")
	if bin == "" {
		t.Fatal("RAIL_SRIOV_BIN (the raild and rail binaries) is not set: run through make test-sriov")
	}
	addPFRxes(t)
	dir := t.TempDir()
	r, err := harness.StartRaild(harness.RaildOptions{Bin: filepath.Join(bin, "raild"), Dir: dir, Root: "/", NodeName: "sriov-rig",
		Config: harness.DaemonConfig{Pools: []ipam.PoolConfig{{Name: "vf", Subnet: "10.71.0.0/24"}}}})
	if err != nil {
		t.Fatalf("start raild: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("raild's log:\n%s", r.LogTail(40))
		}
		_ = r.Stop()
	})
	return &product{bin: bin, raild: r}
}

// addPFRxes puts an rxe on each PF's netdev (rxe0 on pf0, rxe1 on pf1),
// the RDMA device that places the PF, unless it is there.
func addPFRxes(t *testing.T) {
	t.Helper()
	if _, err := run("modprobe", "-a", "rdma_rxe", "ib_uverbs", "rdma_ucm"); err != nil {
		t.Fatal(err)
	}
	for i, pf := range rigPFs {
		rxe := fmt.Sprintf("rxe%d", i)
		if _, err := os.Stat("/sys/class/infiniband/" + rxe); err == nil {
			continue
		}
		if _, err := run("rdma", "link", "add", rxe, "type", "rxe", "netdev", pf.name); err != nil {
			t.Fatal(err)
		}
	}
}

// netconf is a NAD's config for vf mode on the PF of rxe, with sriov-cni's keys.
func (p *product) netconf(rxe string) []byte {
	return fmt.Appendf(nil, `{"cniVersion":"1.0.0","name":"vfnet","type":"rail","mode":"vf","pool":"vf","nics":[%q],"socket":%q,`+
		`"vlan":100,"vlanQoS":3,"spoofchk":"off","trust":"on","max_tx_rate":100}`, rxe, p.raild.Socket)
}

// cni runs the rail plugin as a runtime does, for a pod alone (Multus
// delegate style: CNI_IFNAME net1, no prevResult).
func (p *product) cni(command, sandbox, netns string, conf []byte) (*current.Result, error) {
	cmd := exec.Command(filepath.Join(p.bin, "rail"))
	cmd.Env = append(os.Environ(), "CNI_COMMAND="+command, "CNI_CONTAINERID="+sandbox, "CNI_NETNS="+netns, "CNI_IFNAME=net1",
		"CNI_PATH="+p.bin, "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=sriov;K8S_POD_NAME="+sandbox)
	cmd.Stdin = bytes.NewReader(conf)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("rail %s %s: %w: %s %s", command, sandbox, err, stdout.String(), stderr.String())
	}
	if command != "ADD" {
		return nil, nil
	}
	var res current.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("rail ADD result %q: %w", stdout.String(), err)
	}
	return &res, nil
}

// vfWithMAC finds the VF of pf whose admin MAC is mac.
func vfWithMAC(t *testing.T, pf string, mac string) (vfInfo, bool) {
	t.Helper()
	for vf := range numVFs(t, pf) {
		if v := readVF(t, pf, vf); v.Address == mac {
			return v, true
		}
	}
	return vfInfo{}, false
}

// pfVFs is every VF of the rig's PFs as the PFs report them.
func pfVFs(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, pf := range rigPFs {
		for vf := range numVFs(t, pf.name) {
			fmt.Fprintf(&b, "%s vf %d: %s\n", pf.name, vf, readVF(t, pf.name, vf))
		}
	}
	return b.String()
}

// allVFs is every VF of the rig's PFs and each VF netdev (all on the host), as now.
func allVFs(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, pf := range rigPFs {
		for vf := range numVFs(t, pf.name) {
			fmt.Fprintf(&b, "%s vf %d: %s; netdev %s\n", pf.name, vf, readVF(t, pf.name, vf), netdevState(t, pf.pci, vf))
		}
	}
	return b.String()
}

func (p *product) leases(t *testing.T) []api.Lease {
	t.Helper()
	return raildLeases(t, p.raild)
}

// TestProductVFPods: raild and the rail plugin give two pods VFs of the
// PFs their NADs select; the settings read back from the PF; the pods
// talk over VLAN 100; DEL restores every VF. Then a pod netns dies without
// DEL and raild restarts: its sweep resets the VF, its lease is gone, and
// the next pod gets the VF with its own MAC, never the dead pod's.
func TestProductVFPods(t *testing.T) {
	inGuest(t)
	p := startProduct(t)
	before := allVFs(t)
	pods := []struct{ sandbox, netns, rxe, pf string }{
		{"sandbox-a", newPodNetns(t, "prod-a"), "rxe0", "pf0"},
		{"sandbox-b", newPodNetns(t, "prod-b"), "rxe1", "pf1"},
	}
	var addrs []string
	for _, pod := range pods {
		res, err := p.cni("ADD", pod.sandbox, pod.netns, p.netconf(pod.rxe))
		if err != nil {
			t.Fatal(err)
		}
		mac := api.LeaseMAC(pod.sandbox, "net1").String()
		v, ok := vfWithMAC(t, pod.pf, mac)
		if !ok {
			t.Fatalf("no VF of %s carries the lease's MAC %s: %s", pod.pf, mac, allVFs(t))
		}
		want := fmt.Sprintf("mac %s vlan 100 qos 3 max_tx 100 min_tx 0 spoofchk false link_state auto trust true", mac)
		if v.String() != want {
			t.Errorf("%s VF %d: %s, want %s", pod.pf, v.VF, v, want)
		}
		if len(res.IPs) != 1 {
			t.Fatalf("result %+v: want one address", res)
		}
		addrs = append(addrs, res.IPs[0].Address.IP.String())
		t.Logf("%s: VF %d of %s, %s: %s", pod.sandbox, v.VF, pod.pf, res.IPs[0].Address.String(), v)
	}
	if out, err := run("ip", "netns", "exec", "prod-a", "ping", "-c", "3", "-W", "3", addrs[1]); err != nil {
		t.Errorf("the pods cannot talk over their VFs: %v", err)
	} else {
		t.Logf("ping: %s", lastLine(out))
	}
	for _, pod := range pods {
		if _, err := p.cni("DEL", pod.sandbox, pod.netns, p.netconf(pod.rxe)); err != nil {
			t.Fatal(err)
		}
	}
	if after := allVFs(t); after != before {
		t.Errorf("VFs after DEL:\n%s\nwant as before:\n%s", after, before)
	}
	if l := p.leases(t); len(l) != 0 {
		t.Errorf("leases after DEL: %+v", l)
	}

	// A pod netns destroyed without DEL, then raild restarted.
	if _, err := run("ip", "netns", "add", "prod-dies"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.cni("ADD", "sandbox-dies", "/run/netns/prod-dies", p.netconf("rxe0")); err != nil {
		t.Fatal(err)
	}
	dead := api.LeaseMAC("sandbox-dies", "net1").String()
	dying, ok := vfWithMAC(t, "pf0", dead)
	if !ok {
		t.Fatalf("no VF of pf0 carries the pod's lease MAC %s: %s", dead, allVFs(t))
	}
	if _, err := run("ip", "netns", "del", "prod-dies"); err != nil {
		t.Fatal(err)
	}
	// the kernel hands the VF back from the dying netns: wait until its
	// netdev is in the host again
	pf0, err := filepath.EvalSymlinks("/sys/class/net/pf0/device")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := waitVFNetdev(filepath.Base(pf0), dying.VF); err != nil {
		t.Fatal(err)
	}
	if err := p.raild.Restart(); err != nil {
		t.Fatalf("restart raild: %v", err)
	}
	if after := allVFs(t); after != before {
		t.Errorf("VFs after raild's restart:\n%s\nwant as before:\n%s", after, before)
	}
	if l := p.leases(t); len(l) != 0 {
		t.Errorf("leases after raild's restart: %+v, want the dead pod's released", l)
	}
	next := newPodNetns(t, "prod-next")
	if _, err := p.cni("ADD", "sandbox-next", next, p.netconf("rxe0")); err != nil {
		t.Fatal(err)
	}
	if _, ok := vfWithMAC(t, "pf0", dead); ok {
		t.Errorf("a VF of pf0 still carries the dead pod's MAC %s", dead)
	}
	if _, ok := vfWithMAC(t, "pf0", api.LeaseMAC("sandbox-next", "net1").String()); !ok {
		t.Errorf("the next pod's VF does not carry its own lease MAC: %s", allVFs(t))
	}
	if _, err := p.cni("DEL", "sandbox-next", next, p.netconf("rxe0")); err != nil {
		t.Fatal(err)
	}
	if after := allVFs(t); after != before {
		t.Errorf("VFs at the end:\n%s\nwant as before:\n%s", after, before)
	}
}

// TestProductPFFull: the pods of a NAD that selects pf0 take its VFs; once
// pods hold them all the next ADD is told to try again later (CNI code
// 11: a held VF may free up) and changes nothing; after a DEL it gets the
// freed VF.
func TestProductPFFull(t *testing.T) {
	inGuest(t)
	p := startProduct(t)
	before := allVFs(t)
	var held []string
	deleted := map[string]bool{}
	del := func(sandbox string) {
		if _, err := p.cni("DEL", sandbox, "/run/netns/"+sandbox, p.netconf("rxe0")); err != nil {
			t.Error(err)
		}
		deleted[sandbox] = true
	}
	for i := range vfsPerPF {
		sandbox := fmt.Sprintf("full-%d", i)
		netns := newPodNetns(t, sandbox)
		t.Cleanup(func() {
			if !deleted[sandbox] {
				del(sandbox)
			}
		})
		if _, err := p.cni("ADD", sandbox, netns, p.netconf("rxe0")); err != nil {
			t.Fatal(err)
		}
		held = append(held, sandbox)
	}
	full := pfVFs(t) // the VFs' netdevs are in the pods
	late := newPodNetns(t, "full-late")
	_, err := p.cni("ADD", "full-late", late, p.netconf("rxe0"))
	if err == nil || !strings.Contains(err.Error(), `"code": 11`) || !strings.Contains(err.Error(), "held by") {
		t.Fatalf("ADD on a PF whose VFs pods hold = %v, want code 11 naming the holders", err)
	}
	t.Logf("refusal: %v", err)
	if got := pfVFs(t); got != full {
		t.Errorf("the refused ADD changed VFs:\n%s\nwant:\n%s", got, full)
	}
	del(held[0])
	t.Cleanup(func() {
		if !deleted["full-late"] {
			del("full-late")
		}
	})
	if _, err := p.cni("ADD", "full-late", late, p.netconf("rxe0")); err != nil {
		t.Fatalf("ADD after a VF was freed: %v", err)
	}
	del(held[1])
	del("full-late")
	if after := allVFs(t); after != before {
		t.Errorf("VFs at the end:\n%s\nwant as before:\n%s", after, before)
	}
}
