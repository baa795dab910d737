package sriov

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestProductDeviceID: a NAD whose resource is an SR-IOV device plugin
// pool gets the VF the device plugin allocated from Multus, as "deviceID"
// (and "pciBusID") in the delegate's config: rail in vf mode configures
// exactly that VF through its PF and moves it into the pod, whichever VF
// it would have picked itself (here the last VF of pf1, not the first free
// one); DEL restores it. A deviceID that names no VF of the node is
// refused with the field named, and changes nothing.
func TestProductDeviceID(t *testing.T) {
	inGuest(t)
	p := startProduct(t)
	before := allVFs(t)
	pf := rigPFs[1]
	last := numVFs(t, pf.name) - 1
	vf, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/bus/pci/devices/%s/virtfn%d", pf.pci, last))
	if err != nil {
		t.Fatal(err)
	}
	pci := filepath.Base(vf)
	conf := p.vfConf(t, map[string]any{"deviceID": pci, "pciBusID": pci})
	netns := newPodNetns(t, "devid")
	if _, err := p.cni("ADD", "devid", netns, conf); err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			_, _ = p.cni("DEL", "devid", netns, conf)
		}
	})
	if l := leaseOf(t, p.raild, "devid"); l.VF != pci {
		t.Errorf("lease holds VF %s, want the allocated %s", l.VF, pci)
	}
	mac := api.LeaseMAC("devid", "net1").String()
	want := fmt.Sprintf("mac %s vlan 100 qos 3 max_tx 100 min_tx 0 spoofchk false link_state auto trust true", mac)
	if got := readVF(t, pf.name, last).String(); got != want {
		t.Errorf("%s VF %d (%s): %s, want %s", pf.name, last, pci, got, want)
	}
	if out, err := run("ip", "netns", "exec", "devid", "readlink", "-f", "/sys/class/net/net1/device"); err != nil || filepath.Base(strings.TrimSpace(out)) != pci {
		t.Errorf("the pod's net1 is %q (%v), want the VF %s", strings.TrimSpace(out), err, pci)
	}
	if _, err := p.cni("DEL", "devid", netns, conf); err != nil {
		t.Fatal(err)
	}
	deleted = true
	if after := allVFs(t); after != before {
		t.Errorf("VFs after DEL:\n%s\nwant as before:\n%s", after, before)
	}

	// the device plugin's allocation is a PCI address this node has no VF at
	bad := p.vfConf(t, map[string]any{"deviceID": "0000:09:00.0"})
	other := newPodNetns(t, "devid-bad")
	_, err = p.cni("ADD", "devid-bad", other, bad)
	if err == nil || !strings.Contains(err.Error(), "0000:09:00.0") {
		t.Fatalf("ADD with a deviceID naming no VF = %v, want an error naming it", err)
	}
	t.Logf("refusal: %v", err)
	if after := allVFs(t); after != before {
		t.Errorf("VFs after the refused ADD:\n%s\nwant as before:\n%s", after, before)
	}
	if l := p.leases(t); len(l) != 0 {
		t.Errorf("leases at the end: %+v", l)
	}
}
