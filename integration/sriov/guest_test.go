// Package sriov runs vf mode's attach sequence against real SR-IOV: inside
// the SR-IOV VM rig's guest (run.sh), where QEMU's igb NICs have VFs that
// are real PCI functions under the guest's igbvf driver. On any other host
// every test skips (RAIL_SRIOV_GUEST=1 is set only by the guest's job).
package sriov

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The rig's PFs by PCI address (see run.sh): pf0 on a root port, pf1
// behind the PCIe switch. pf2 stays without VFs.
var rigPFs = []struct{ name, pci string }{{"pf0", "0000:01:00.0"}, {"pf1", "0000:04:00.0"}}

const vfsPerPF = 2

func TestMain(m *testing.M) {
	if os.Getenv("RAIL_SRIOV_GUEST") != "1" {
		fmt.Println("not in the SR-IOV rig's guest (RAIL_SRIOV_GUEST unset): every test skips")
		os.Exit(m.Run())
	}
	if err := setUpPFs(); err != nil {
		fmt.Fprintln(os.Stderr, "set up the PFs:", err)
		os.Exit(125)
	}
	os.Exit(m.Run())
}

func inGuest(t *testing.T) {
	t.Helper()
	if os.Getenv("RAIL_SRIOV_GUEST") != "1" {
		t.Skip("runs in the SR-IOV rig's guest only")
	}
}

func run(args ...string) (string, error) {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// setUpPFs loads igb and igbvf, names the PFs pf0 and pf1 by PCI address,
// brings them up (igbvf picks random MACs from a PF still in reset) and
// enables vfsPerPF VFs on each, waiting for the VFs' netdevs.
func setUpPFs() error {
	if _, err := run("modprobe", "-a", "igb", "igbvf"); err != nil {
		return err
	}
	for _, pf := range rigPFs {
		dir := "/sys/bus/pci/devices/" + pf.pci
		var netdev string
		for i := 0; i < 100 && netdev == ""; i++ {
			netdev = firstEntry(dir + "/net")
			time.Sleep(100 * time.Millisecond)
		}
		if netdev == "" {
			return fmt.Errorf("PF %s has no netdev", pf.pci)
		}
		if netdev != pf.name {
			if _, err := run("ip", "link", "set", netdev, "name", pf.name); err != nil {
				return err
			}
		}
		if _, err := run("ip", "link", "set", pf.name, "up"); err != nil {
			return err
		}
		if err := os.WriteFile(dir+"/sriov_numvfs", []byte(fmt.Sprint(vfsPerPF)), 0o644); err != nil {
			return fmt.Errorf("enable VFs on %s: %w", pf.name, err)
		}
		for vf := range vfsPerPF {
			if _, err := waitVFNetdev(pf.pci, vf); err != nil {
				return err
			}
		}
	}
	return nil
}

func firstEntry(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return ""
	}
	return entries[0].Name()
}

// waitVFNetdev is the netdev of VF vf of the PF at pci, in the host netns.
func waitVFNetdev(pci string, vf int) (string, error) {
	dir := fmt.Sprintf("/sys/bus/pci/devices/%s/virtfn%d/net", pci, vf)
	for range 200 {
		if name := firstEntry(dir); name != "" {
			return name, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("VF %d of %s has no netdev on the host", vf, pci)
}

// vfInfo is one VF as `ip -d -j link show <pf>` reports it: read back
// with iproute2, not with the code under test.
type vfInfo struct {
	VF       int    `json:"vf"`
	Address  string `json:"address"`
	VLANList []struct {
		VLAN     int    `json:"vlan"`
		QoS      int    `json:"qos"`
		Protocol string `json:"protocol"`
	} `json:"vlan_list"`
	Rate struct {
		MaxTx int `json:"max_tx"`
		MinTx int `json:"min_tx"`
	} `json:"rate"`
	Spoofchk  bool   `json:"spoofchk"`
	LinkState string `json:"link_state"`
	Trust     bool   `json:"trust"`
}

// String is what the tests compare: every attribute attach may set.
func (v vfInfo) String() string {
	vlan, qos := 0, 0
	if len(v.VLANList) > 0 {
		vlan, qos = v.VLANList[0].VLAN, v.VLANList[0].QoS
	}
	return fmt.Sprintf("mac %s vlan %d qos %d max_tx %d min_tx %d spoofchk %v link_state %s trust %v",
		v.Address, vlan, qos, v.Rate.MaxTx, v.Rate.MinTx, v.Spoofchk, v.LinkState, v.Trust)
}

func readVF(t *testing.T, pf string, vf int) vfInfo {
	t.Helper()
	out, err := run("ip", "-d", "-j", "link", "show", pf)
	if err != nil {
		t.Fatal(err)
	}
	var links []struct {
		VFs []vfInfo `json:"vfinfo_list"`
	}
	if err := json.Unmarshal([]byte(out), &links); err != nil || len(links) != 1 {
		t.Fatalf("parse ip -j link show %s: %v: %s", pf, err, out)
	}
	for _, v := range links[0].VFs {
		if v.VF == vf {
			return v
		}
	}
	t.Fatalf("%s reports no VF %d: %s", pf, vf, out)
	return vfInfo{}
}

// netdevState is a VF netdev as the host sees it: name, MTU, MAC, flags.
func netdevState(t *testing.T, pci string, vf int) string {
	t.Helper()
	name, err := waitVFNetdev(pci, vf)
	if err != nil {
		t.Fatal(err)
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join("/sys/class/net", name, f))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%s mtu %s mac %s flags %s alias %q", name, read("mtu"), read("address"), read("flags"), read("ifalias"))
}

func newPodNetns(t *testing.T, name string) string {
	t.Helper()
	if _, err := run("ip", "netns", "add", name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = run("ip", "netns", "del", name) })
	return "/run/netns/" + name
}
