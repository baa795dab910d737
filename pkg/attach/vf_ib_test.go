package attach

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology/fakesys"
	"github.com/railcni/rail/pkg/vfnetdev"
)

// The InfiniBand VF tests lay out a machine with ConnectX-7 IB PFs and
// their VFs in fakesys (as mlx5 does), stand in for the VF's IPoIB netdev
// with a veth end (no IB here), and model the PF's driver (fakePF with
// GUIDs) and the kernel's answer to a rebind (fakeRebind): the VF's
// netdev is destroyed and a new one appears under another name with a
// new ifindex, its address derived from the GUID the VF took.

const ibVF = 2 // the VF index the tests attach

// ibWorld is vfWorld on an InfiniBand PF.
type ibWorld struct {
	*vfWorld
	root, pci string
	rebind    *fakeRebind
	rdma      *fakeRDMA
}

func newIBWorld(t *testing.T) *ibWorld {
	t.Helper()
	e := newTestEnv(t)
	root := t.TempDir()
	spec, err := fakesys.Write(root, "h100x2-cx7ib-sriov", fakesys.Options{})
	if err != nil {
		t.Fatalf("write machine: %v", err)
	}
	pf := spec.PFs[0]
	w := &ibWorld{vfWorld: &vfWorld{e: e, pf: newFakePF(pf.Netdev, 4).infiniband(), netdev: e.addNIC(1500, true)},
		root: root, pci: pf.VFs[ibVF].PCI}
	// The stand-in is the VF's netdev in sysfs too.
	netDir := filepath.Join(root, "sys/bus/pci/devices", w.pci, "net")
	if err := os.RemoveAll(netDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(netDir, w.netdev), 0o755); err != nil {
		t.Fatal(err)
	}
	own := mustMAC(macIn(t, e.host, w.netdev))
	zero := make(net.HardwareAddr, 8).String()
	w.rebind = &fakeRebind{t: t, e: e, root: root, pci: w.pci, pf: w.pf, index: ibVF, active: zero,
		macs: map[string]net.HardwareAddr{zero: own}, mac: own}
	w.rdma = &fakeRDMA{moved: w.rebind.remake}
	w.a = attacher{moveRDMA: w.rdma.move, pf: w.pf.control, sysRoot: root, rebind: w.rebind.do}
	w.hostBefore, w.podBefor = snapshot(t, e.host), snapshot(t, e.pod)
	w.macBefore = macIn(t, e.host, w.netdev)
	w.stateBefore = w.pf.state(ibVF)
	return w
}

// fakeRebind is the kernel's answer to unbinding and binding the VF's
// driver: the driver files are written as rebindVFDriver writes them, the
// VF takes the GUIDs its PF holds, its netdev goes, and a new one (down,
// MTU 1500, another name and ifindex) appears in the host, with the MAC of
// the port GUID the VF now has. remake alone is what moving an IB VF's
// RDMA device to another netns does to its netdev.
type fakeRebind struct {
	t     *testing.T
	e     *testEnv
	root  string
	pci   string
	pf    *fakePF
	index int
	mu    sync.Mutex
	count int
	fail  error // the next rebind fails so, the VF left as it was
	// active is the port GUID the VF runs with; macs the netdev MAC each
	// GUID gives (the first one the stand-in's own); mac the netdev's now.
	active string
	macs   map[string]net.HardwareAddr
	mac    net.HardwareAddr
}

func (r *fakeRebind) do(pci string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		err := r.fail
		r.fail = nil
		return err
	}
	if err := vfnetdev.RebindDriver(r.root, pci); err != nil {
		return err
	}
	r.count++
	r.active = r.pf.state(r.index).PortGUID.String()
	return r.remakeLocked()
}

func (r *fakeRebind) remake() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.remakeLocked()
}

// remakeLocked destroys the VF's netdev wherever it is and makes a new
// one in the host.
func (r *fakeRebind) remakeLocked() error {
	deleted := false
	for _, n := range []ns.NetNS{r.e.host, r.e.pod} {
		h := handle(r.t, n)
		links, err := h.LinkList()
		if err != nil {
			return err
		}
		for _, l := range links {
			if l.Attrs().HardwareAddr.String() == r.mac.String() && l.Type() == "veth" {
				if err := h.LinkDel(l); err != nil {
					return err
				}
				deleted = true
			}
		}
	}
	if !deleted {
		return fmt.Errorf("fake kernel: the VF's netdev (%s) is nowhere", r.mac)
	}
	mac, ok := r.macs[r.active]
	if !ok {
		g := mustMAC(r.active)
		mac = net.HardwareAddr{0x02, g[3], g[4], g[5], g[6], g[7]}
		r.macs[r.active] = mac
	}
	attrs := netlink.NewLinkAttrs()
	attrs.Name, attrs.HardwareAddr = netnstest.UniqueName(r.t, "ibn"), mac
	veth := &netlink.Veth{LinkAttrs: attrs, PeerName: netnstest.UniqueName(r.t, "wire"), PeerNamespace: netlink.NsFd(int(r.e.wire.Fd()))}
	if err := handle(r.t, r.e.host).LinkAdd(veth); err != nil {
		return err
	}
	r.mac = mac
	netDir := filepath.Join(r.root, "sys/bus/pci/devices", r.pci, "net")
	if err := os.RemoveAll(netDir); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(netDir, attrs.Name), 0o755)
}

func (r *fakeRebind) rebinds() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

func ibSpec(w *ibWorld, guid string) Spec {
	s := vfSpecFor(w.netdev, ibVF, VFConfig{})
	s.VF.PF, s.VF.GUID = w.pf.name, mustMAC(guid)
	return s
}

// assertGUIDs checks the GUIDs the PF reports for the VF.
func (w *ibWorld) assertGUIDs(t *testing.T, when, want string) {
	t.Helper()
	st := w.pf.state(ibVF)
	if st.NodeGUID.String() != want || st.PortGUID.String() != want {
		t.Errorf("%s: VF GUIDs node %s port %s, want %s", when, st.NodeGUID, st.PortGUID, want)
	}
}

// TestIBVFAttachDetach: the GUID is set through the PF (node, then port),
// the VF's driver rebound so that it takes it, the new netdev found by the
// VF's PCI address and moved in; DEL sets the old GUIDs back (all ones for
// the zero GUIDs mlx5 VFs start with), rebinds, and the VF's new netdev
// has its host name, MTU and state again.
func TestIBVFAttachDetach(t *testing.T) {
	const guid = "0e:72:aa:bb:cc:dd:ee:01"
	w := newIBWorld(t)
	s := ibSpec(w, guid)
	if _, err := attachIn(w.e, w.a, s); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	w.assertGUIDs(t, "after Attach", guid)
	if got, want := w.pf.callLog(), []string{"guid " + guid + " " + guid}; !slices.Equal(got, want) {
		t.Errorf("PF calls of Attach %q, want %q", got, want)
	}
	if n := w.rebind.rebinds(); n != 1 {
		t.Errorf("%d rebinds on Attach, want 1", n)
	}
	for _, f := range []string{"sys/bus/pci/drivers/mlx5_core/unbind", "sys/bus/pci/drivers/mlx5_core/bind"} {
		if b, err := os.ReadFile(filepath.Join(w.root, f)); err != nil || string(b) != w.pci {
			t.Errorf("%s holds %q (%v), want the VF's PCI address %s", f, b, err, w.pci)
		}
	}
	pod := mustLinkIn(t, w.e.pod, "rail0")
	if pod.Attrs().MTU != 1400 || !isUp(pod) {
		t.Errorf("pod VF netdev mtu %d up %v, want 1400 and up", pod.Attrs().MTU, isUp(pod))
	}
	if a := pod.Attrs().Alias; !strings.Contains(a, ":ng=0000000000000000:pg=0000000000000000") || !strings.Contains(a, "rail:"+w.netdev+":") {
		t.Errorf("pod netdev's label %q does not record the old GUIDs and host name", a)
	}
	if l := linkIn(t, w.e.host, w.netdev); l != nil {
		t.Errorf("the VF's netdev %s is still in the host", w.netdev)
	}
	n := len(w.pf.callLog())
	if err := detachWith(w.e, w.a, delSpec(s)); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	if got, want := w.pf.callLog()[n:], []string{"guid ff:ff:ff:ff:ff:ff:ff:ff ff:ff:ff:ff:ff:ff:ff:ff"}; !slices.Equal(got, want) {
		t.Errorf("PF calls of Detach %q, want %q", got, want)
	}
	if n := w.rebind.rebinds(); n != 2 {
		t.Errorf("%d rebinds after Detach, want 2", n)
	}
	w.assertAsBefore(t, "after Detach")
	if err := detachWith(w.e, w.a, delSpec(s)); err != nil {
		t.Fatalf("second Detach: %v", err)
	}
	w.assertAsBefore(t, "after the second Detach")
	if n := w.rebind.rebinds(); n != 2 {
		t.Errorf("the second Detach rebound the VF again (%d rebinds)", n)
	}
}

// unreachableRoute makes an ADD fail after the VF moved into the pod.
func unreachableRoute(_ *ibWorld, s *Spec) { s.Routes = []Route{route("10.20.0.0/16", "192.168.77.1")} }

// TestIBVFBackFromDeadPod: the pod netns died without DEL; the kernel
// handed the VF's netdev back under its pod name, labelled. raild's sweep
// sets the old GUIDs back and rebinds, and the VF is as before.
func TestIBVFBackFromDeadPod(t *testing.T) {
	w := newIBWorld(t)
	s := ibSpec(w, "0e:72:aa:bb:cc:dd:ee:03")
	if _, err := attachIn(w.e, w.a, s); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	kernelReturnsToHost(t, w.e, s.Name, func(l netlink.Link) string { return l.Attrs().Name })
	removeTestNetns(w.e.pod)
	w.podBefor = ""
	var got []ReturnedVF
	err := w.e.inHost(func() error {
		var err error
		got, err = HostVFs{a: w.a}.ResetReturned(func(string, int) bool { return false })
		return err
	})
	if err != nil || len(got) != 1 || got[0].Err != nil {
		t.Fatalf("ResetReturned = %+v, %v", got, err)
	}
	w.assertAsBefore(t, "after the sweep")
	if n := w.rebind.rebinds(); n != 2 {
		t.Errorf("%d rebinds, want 2", n)
	}
}

// TestVFGUIDOnEthernetPF: a GUID asked of an Ethernet (RoCE) PF's VF
// fails the ADD with the driver's refusal, the VF as it was, no rebind.
func TestVFGUIDOnEthernetPF(t *testing.T) {
	w := newIBWorld(t)
	w.pf.mu.Lock()
	w.pf.ib = false
	w.pf.mu.Unlock()
	_, err := attachIn(w.e, w.a, ibSpec(w, "0e:72:aa:bb:cc:dd:ee:04"))
	if !errorMatches(err, "set guid of VF 2 of PF ibp25s0 through the PF: operation not supported") {
		t.Fatalf("Attach = %v", err)
	}
	w.assertAsBefore(t, "after the failed Attach")
	if n := w.rebind.rebinds(); n != 0 {
		t.Errorf("%d rebinds, want 0", n)
	}
}

func TestVFRecordGUIDs(t *testing.T) {
	rec := aliasRecord{Host: "ibp25s0f3", Name: "rail0", MTU: 4092, Up: true,
		VF: &vfRecord{PF: "ibp25s0", Index: 2, GUIDs: vfnetdev.GUIDs{NodeGUID: mustMAC("00:00:00:00:00:00:00:00"), PortGUID: mustMAC("0c:42:a1:03:00:5e:5f:a4")}}}
	got, ok := parseAlias(rec.String())
	if !ok || !reflect.DeepEqual(got, rec) {
		t.Fatalf("round trip of %q = %+v, %v", rec.String(), got, ok)
	}
	for _, bad := range []string{
		"rail:x:name=r:mtu=1:up=1:pf=p:vf=1:ng=0000000000000000",             // node without port
		"rail:x:name=r:mtu=1:up=1:pf=p:vf=1:ng=00:pg=0000000000000000",       // short
		"rail:x:name=r:mtu=1:up=1:pf=p:vf=1:ng=zz00000000000000:pg=00000000", // not hex
	} {
		if _, ok := parseAlias(bad); ok {
			t.Errorf("parseAlias(%q) accepted", bad)
		}
	}
}

// TestReadVFGUIDsFromKernel asks this kernel for the VF GUIDs of a link
// without VFs (no SR-IOV here): the request is one the kernel takes, and
// the answer holds no VF.
func TestReadVFGUIDsFromKernel(t *testing.T) {
	e := newTestEnv(t)
	nic := e.addNIC(1500, true)
	index := mustLinkIn(t, e.host, nic).Attrs().Index
	var got map[int]vfGUIDs
	err := e.inHost(func() error {
		var err error
		got, err = readVFGUIDs(index)
		return err
	})
	if err != nil || len(got) != 0 {
		t.Fatalf("readVFGUIDs = %+v, %v; want no VF and no error", got, err)
	}
	if err := e.inHost(func() error { _, err := readVFGUIDs(1 << 30); return err }); err == nil {
		t.Errorf("readVFGUIDs of a link that does not exist worked")
	}
}

// TestIBVFSequences attaches an IB VF, in shared and in exclusive RDMA
// netns mode, and fails the ADD at each step: the PF's GUID call, the
// rebind, the RDMA device's move, after the move. In exclusive mode the
// VF's RDMA device moves into the pod before its netdev (the kernel makes
// the IPoIB netdev anew in the host when the device moves; the new one is
// found by the VF's PCI address and moved in), under the name sysfs gives
// it after the rebind; DEL moves the netdev out first, then the device,
// then sets the GUIDs back. Every run ends with the VF as it was.
func TestIBVFSequences(t *testing.T) {
	tests := []struct {
		name      string
		exclusive bool
		renumber  string // the VF's RDMA device after the rebind ("": mlx5_4 still)
		prepare   func(w *ibWorld, s *Spec)
		wantErr   string
		rebinds   int
		rdmaMoves int
	}{
		{name: "shared: PF refuses the GUID", prepare: func(w *ibWorld, _ *Spec) { w.pf.failAt = 1 },
			wantErr: "set guid of VF 2 of PF ibp25s0 through the PF", rebinds: 0},
		{name: "shared: rebind fails", prepare: func(w *ibWorld, _ *Spec) { w.rebind.fail = fmt.Errorf("injected bind failure") },
			wantErr: "rebind VF 2 of PF ibp25s0 to take guid", rebinds: 1},
		{name: "shared: route fails after the move", prepare: unreachableRoute, wantErr: "add route 10.20.0.0/16 via 192.168.77.1", rebinds: 2},
		{name: "exclusive: attach and detach", exclusive: true, rebinds: 2, rdmaMoves: 2},
		{name: "exclusive: device numbered anew by the rebind", exclusive: true, renumber: "mlx5_10", rebinds: 2, rdmaMoves: 2},
		{name: "exclusive: device move refused", exclusive: true, prepare: func(w *ibWorld, _ *Spec) { w.rdma.failIn = errInjected },
			wantErr: "move rdma device mlx5_4 of InfiniBand VF", rebinds: 2, rdmaMoves: 1},
		{name: "exclusive: route fails after the move", exclusive: true, prepare: unreachableRoute, wantErr: "add route 10.20.0.0/16",
			rebinds: 2, rdmaMoves: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newIBWorld(t)
			s := ibSpec(w, "0e:72:aa:bb:cc:dd:ee:05")
			dev := "mlx5_4"
			if tt.exclusive {
				s.RDMADevice, s.RDMANetns = dev, rdma.NetnsExclusive
			}
			if tt.renumber != "" {
				ib := filepath.Join(w.root, "sys/bus/pci/devices", w.pci, "infiniband")
				if err := os.Rename(filepath.Join(ib, dev), filepath.Join(ib, tt.renumber)); err != nil {
					t.Fatal(err)
				}
				dev = tt.renumber
			}
			if tt.prepare != nil {
				tt.prepare(w, &s)
			}
			_, err := attachIn(w.e, w.a, s)
			if !errorMatches(err, tt.wantErr) {
				t.Fatalf("Attach = %v, want %q", err, tt.wantErr)
			}
			t.Logf("Attach: %v", err)
			if err == nil {
				pod := mustLinkIn(t, w.e.pod, "rail0")
				if a := pod.Attrs().Alias; !strings.Contains(a, ":rdma="+dev+":") || !isUp(pod) || pod.Attrs().MTU != 1400 {
					t.Errorf("pod netdev: alias %q up %v mtu %d; want the rdma device %s recorded, up, 1400", a, isUp(pod), pod.Attrs().MTU, dev)
				}
				if err := detachWith(w.e, w.a, delSpec(s)); err != nil {
					t.Fatalf("Detach: %v", err)
				}
			}
			w.assertAsBefore(t, "at the end")
			calls := w.rdma.calls
			if len(calls) != tt.rdmaMoves || (len(calls) > 0 && !strings.HasPrefix(calls[0], dev+` ""->`)) ||
				(len(calls) == 2 && !strings.HasSuffix(calls[1], `->""`)) {
				t.Errorf("rdma moves %q, want %d of %s, into the pod first", calls, tt.rdmaMoves, dev)
			}
			if n := w.rebind.rebinds(); n != tt.rebinds {
				t.Errorf("%d rebinds, want %d", n, tt.rebinds)
			}
		})
	}
}
