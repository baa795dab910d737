package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// Networks of the VF scenario: rail's pool and upstream's addresses.
const (
	vfPoolSubnet        = "10.71.0.0/24"  // raild's pool for rail vf
	vfHostLocalSubnet   = "10.72.0.0/24"  // sriov-cni + host-local
	vfStaticAddrPattern = "10.73.0.%d/24" // host-device + static, one per VF
	vlan8021Q           = 0x8100
)

// vfSettings are what both sides set on a pod's VF through its PF, as
// sriov-cni's keys name them (rail takes the same keys): the usual
// settings of an SR-IOV pod network. Both sides also give the VF an admin
// MAC (rail its lease's; sriov-cni the slot's, through runtimeConfig).
type vfSettings struct {
	vlan, qos, maxTxRate int
	spoofchk, trust      bool
}

func benchVFSettings() vfSettings {
	return vfSettings{vlan: 100, qos: 3, maxTxRate: 100, spoofchk: false, trust: true}
}

// keys are the settings as netconf keys (rail's and sriov-cni's alike).
func (s vfSettings) keys() map[string]any {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	return map[string]any{"vlan": s.vlan, "vlanQoS": s.qos, "max_tx_rate": s.maxTxRate,
		"spoofchk": onOff(s.spoofchk), "trust": onOff(s.trust)}
}

// upstreamVF is what rail vf is compared with: sriov-cni + host-local
// when a sriov-cni binary is given, else host-device + static (which
// moves the VF by PCI address but sets nothing through the PF).
type upstreamVF struct {
	sriovCNI string // the binary ("" for host-device)
}

func (u upstreamVF) name() string {
	if u.sriovCNI != "" {
		return "sriov-cni + host-local"
	}
	return "host-device + static"
}

// vfSideBuilder makes the VF scenario's sides on the pods.
type vfSideBuilder struct {
	sideBuilder
	cni      *harness.HostCNI
	dir      string
	pf       vfPF
	settings vfSettings
}

func (b *vfSideBuilder) network(name string, plugin map[string]any) attachment {
	if b.err != nil {
		return attachment{}
	}
	network, err := b.cni.Network(name, cniVersion, plugin)
	b.err = err
	return attachment{network: network, ifName: "net1"}
}

// rail is rail in vf mode, placing by the PF's RDMA device (as a NAD
// selects a PF), with the settings; plugin is the binary's name in the
// plugin dirs (rail, or railBasePlugin for the A/B's other build).
func (b *vfSideBuilder) rail(plugin, socket, rdma string) *cniSide {
	conf := map[string]any{"type": plugin, "socket": socket, "mode": api.ModeVF, "pool": "vf", "nics": []string{rdma},
		"capabilities": map[string]any{harness.AnnotationsCapability: true}}
	for k, v := range b.settings.keys() {
		conf[k] = v
	}
	return b.side(b.network(plugin+"-vf", conf))
}

// railBasePlugin is the name the A/B's other rail build has in the
// plugin dir.
const railBasePlugin = "rail-base"

// upstream is one network per slot: the slot's VF by PCI address, as the
// SR-IOV device plugin hands one to Multus (deviceID).
func (b *vfSideBuilder) upstream(u upstreamVF) *cniSide {
	nets := make([][]attachment, len(b.pods))
	for slot := range b.pods {
		vf := b.pf.vfs[slot]
		var conf map[string]any
		if u.sriovCNI != "" {
			conf = map[string]any{"type": "sriov", "deviceID": vf.pci,
				"runtimeConfig": map[string]any{"mac": slotMAC(slot).String()},
				"ipam":          map[string]any{"type": "host-local", "subnet": vfHostLocalSubnet, "dataDir": filepath.Join(b.dir, "host-local")}}
			for k, v := range b.settings.keys() {
				conf[k] = v
			}
		} else {
			conf = map[string]any{"type": "host-device", "pciBusID": vf.pci, "ipam": map[string]any{
				"type": "static", "addresses": []any{map[string]any{"address": fmt.Sprintf(vfStaticAddrPattern, slot+10)}}}}
		}
		nets[slot] = []attachment{b.network(fmt.Sprintf("upstream-vf-%d", slot), conf)}
	}
	return &cniSide{pods: b.pods, ids: b.ids, networks: func(slot int) []attachment { return nets[slot] },
		ifaces: []string{"net1"}}
}

// linkPlugin puts an executable into the plugin dir under name (flag
// says where it came from, for the message).
func linkPlugin(flag, bin, dir, name string) error {
	if bin == "" {
		return nil
	}
	info, err := os.Stat(bin)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("%s %s: not an executable", flag, bin)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	return os.Symlink(abs, filepath.Join(dir, name))
}
