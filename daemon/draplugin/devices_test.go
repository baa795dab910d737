package draplugin

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/deviceattribute"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// machine writes a built-in fake machine and reads it as raild does.
func machine(t *testing.T, name string) *topology.Machine {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.Write(root, name, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func settled(t *testing.T, c Config) Config {
	t.Helper()
	s, err := c.settings()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func str(d resourcev1.Device, name resourcev1.QualifiedName) string {
	if a, ok := d.Attributes[name]; ok && a.StringValue != nil {
		return *a.StringValue
	}
	return ""
}

func num(d resourcev1.Device, name resourcev1.QualifiedName) (int64, bool) {
	if a, ok := d.Attributes[name]; ok && a.IntValue != nil {
		return *a.IntValue, true
	}
	return 0, false
}

func names(devs []resourcev1.Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.Name
	}
	return out
}

func find(t *testing.T, cat Catalog, name string) resourcev1.Device {
	t.Helper()
	for _, d := range cat.Devices {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("device %s not published; have %v (left: %v)", name, names(cat.Devices), cat.Left)
	return resourcev1.Device{}
}

func TestBuild(t *testing.T) {
	type check func(t *testing.T, m *topology.Machine, cat Catalog)
	published := func(want ...string) check {
		return func(t *testing.T, _ *topology.Machine, cat Catalog) {
			if got := names(cat.Devices); !slices.Equal(got, want) {
				t.Errorf("devices %v, want %v (left: %v)", got, want, cat.Left)
			}
		}
	}
	left := func(name, reason string) check {
		return func(t *testing.T, _ *topology.Machine, cat Catalog) {
			for _, l := range cat.Left {
				if l.Name == name && strings.Contains(l.Reason, reason) {
					return
				}
			}
			t.Errorf("%s not left out for %q: left %v", name, reason, cat.Left)
		}
	}
	shared := func(dev string, slots int64) check {
		return func(t *testing.T, _ *topology.Machine, cat Catalog) {
			d := find(t, cat, dev)
			if d.AllowMultipleAllocations == nil || !*d.AllowMultipleAllocations {
				t.Errorf("%s: allowMultipleAllocations not set", dev)
			}
			c, ok := d.Capacity["rail.dev/slots"]
			if !ok || c.Value.Value() != slots || c.RequestPolicy == nil || c.RequestPolicy.Default.Value() != 1 {
				t.Errorf("%s: slots capacity %+v, want %d with default 1", dev, c, slots)
			}
			if a := d.Attributes["rail.dev/shared"]; a.BoolValue == nil || !*a.BoolValue {
				t.Errorf("%s: rail.dev/shared %+v, want true", dev, a)
			}
			if cat.Entries[dev].Kind != KindShared {
				t.Errorf("%s: kind %s", dev, cat.Entries[dev].Kind)
			}
		}
	}
	exclusive := func(dev string) check {
		return func(t *testing.T, _ *topology.Machine, cat Catalog) {
			d := find(t, cat, dev)
			if a := d.Attributes["rail.dev/shared"]; a.BoolValue == nil || *a.BoolValue {
				t.Errorf("%s: rail.dev/shared %+v, want false", dev, a)
			}
			if d.AllowMultipleAllocations != nil || len(d.Capacity) > 0 {
				t.Errorf("%s: exclusive device with multiple allocations or capacity: %+v", dev, d)
			}
		}
	}
	tainted := func(dev, key string) check {
		return func(t *testing.T, _ *topology.Machine, cat Catalog) {
			d := find(t, cat, dev)
			if len(d.Taints) != 1 || d.Taints[0].Key != key || d.Taints[0].Effect != resourcev1.DeviceTaintEffectNoSchedule {
				t.Errorf("%s: taints %+v, want one NoSchedule %s", dev, d.Taints, key)
			}
		}
	}
	untainted := func(dev string) check {
		return func(t *testing.T, _ *topology.Machine, cat Catalog) {
			if d := find(t, cat, dev); len(d.Taints) > 0 {
				t.Errorf("%s: taints %+v, want none", dev, d.Taints)
			}
		}
	}
	attrs := func(dev, nic string, rail int64) check {
		return func(t *testing.T, m *topology.Machine, cat Catalog) {
			d := find(t, cat, dev)
			n, ok := m.NICByName(nic)
			if !ok {
				t.Fatalf("no NIC %s", nic)
			}
			if got := str(d, AttrPCIBusID); got != n.PCI {
				t.Errorf("%s: pciBusID %q, want %q", dev, got, n.PCI)
			}
			// the root as Kubernetes' own helper reads it from the same sysfs
			want, err := deviceattribute.GetPCIeRootAttributeByPCIBusID(n.PCI, deviceattribute.WithFSFromRoot(filepath.Join(m.Root, "sys")))
			if err != nil {
				t.Fatal(err)
			}
			if got := str(d, AttrPCIeRoot); got != *want.Value.StringValue {
				t.Errorf("%s: pcieRoot %q, Kubernetes reads %q", dev, got, *want.Value.StringValue)
			}
			if got, _ := num(d, AttrNUMANode); got != int64(n.NUMA) {
				t.Errorf("%s: numaNode %d, want %d", dev, got, n.NUMA)
			}
			if got := str(d, "rail.dev/linkLayer"); got != string(n.LinkLayer) {
				t.Errorf("%s: linkLayer %q, want %s", dev, got, n.LinkLayer)
			}
			if got := str(d, "rail.dev/netdev"); got != n.Netdev || got == "" {
				t.Errorf("%s: netdev %q, want %q", dev, got, n.Netdev)
			}
			if got, ok := num(d, "rail.dev/rail"); !ok || got != rail {
				t.Errorf("%s: rail %d (%v), want %d", dev, got, ok, rail)
			}
			if got := str(d, "rail.dev/rate"); got == "" {
				t.Errorf("%s: no rate", dev)
			}
		}
	}
	gpuRoot := func(dev string, gpu int) check {
		return func(t *testing.T, m *topology.Machine, cat Catalog) {
			if got := str(find(t, cat, dev), AttrPCIeRoot); got != m.GPUs[gpu].Root {
				t.Errorf("%s: pcieRoot %q, GPU%d's %q", dev, got, gpu, m.GPUs[gpu].Root)
			}
		}
	}
	numa := func(dev string, want int64) check {
		return func(t *testing.T, _ *topology.Machine, cat Catalog) {
			if got, ok := num(find(t, cat, dev), AttrNUMANode); !ok || got != want {
				t.Errorf("%s: numaNode %d (%v), want %d", dev, got, ok, want)
			}
		}
	}
	rails := map[string]int{"mlx5_0": 0, "mlx5_1": 1, "mlx5_2": 2, "mlx5_3": 3}
	cx7x4 := []string{"mlx5-0", "mlx5-1", "mlx5-2", "mlx5-3"}
	for _, tc := range []struct {
		name     string
		machine  string
		cfg      Config
		view     NodeView
		noTaints bool
		noShare  bool
		checks   []check
	}{
		{name: "IB ports are shared in ipoib, one device each, aligned by root", machine: "h100x8-cx7x4", view: NodeView{Rails: rails},
			checks: []check{published(cx7x4...), shared("mlx5-0", 8), shared("mlx5-3", 8), attrs("mlx5-0", "mlx5_0", 0),
				attrs("mlx5-3", "mlx5_3", 3), gpuRoot("mlx5-0", 0), gpuRoot("mlx5-3", 7), numa("mlx5-3", 1),
				func(t *testing.T, _ *topology.Machine, cat Catalog) {
					if got := str(find(t, cat, "mlx5-0"), "rail.dev/modes"); got != "ipoib" {
						t.Errorf("modes %q, want ipoib", got)
					}
				}}},
		{name: "slots from config, bandwidth from the rate", machine: "h100x8-cx7x4", cfg: Config{SharedSlots: 3, SharedBandwidth: true},
			checks: []check{shared("mlx5-1", 3), func(t *testing.T, _ *topology.Machine, cat Catalog) {
				c, ok := find(t, cat, "mlx5-1").Capacity["rail.dev/bandwidth"]
				if !ok || c.Value.String() != "400G" {
					t.Errorf("bandwidth %+v, want 400G", c)
				}
			}}},
		{name: "move only: exclusive devices", machine: "h100x8-cx7x4", view: NodeView{Limits: Limits{Modes: []api.Mode{api.ModeMove}}},
			checks: []check{published(cx7x4...), exclusive("mlx5-2")}},
		{name: "exclusivePorts wins over the shared modes", machine: "h100x8-cx7x4", cfg: Config{ExclusivePorts: true},
			checks: []check{exclusive("mlx5-0")}},
		{name: "no consumable capacity on the API server: shared ports one claim at a time", machine: "h100x8-cx7x4", noShare: true,
			checks: []check{exclusive("mlx5-0"), func(t *testing.T, _ *topology.Machine, cat Catalog) {
				if got := str(find(t, cat, "mlx5-0"), "rail.dev/modes"); got != "move, ipoib" && got != "move" {
					t.Errorf("modes %q", got)
				}
			}}},
		{name: "macvlan only: IB ports fit no mode", machine: "h100x8-cx7x4", view: NodeView{Limits: Limits{Modes: []api.Mode{api.ModeMacvlan}, Source: "config"}},
			checks: []check{published(), left("mlx5_0", "no mode the node serves fits a InfiniBand port")}},
		{name: "ipvlan only: RoCE ports shared, IB ports fit no mode", machine: "dualport-2s", view: NodeView{Limits: Limits{Modes: []api.Mode{api.ModeIPVLAN}, Source: "config"}},
			checks: []check{shared("mlx4-1", 8), left("mlx5_0", "no mode the node serves fits a InfiniBand port"), func(t *testing.T, _ *topology.Machine, cat Catalog) {
				if got := str(find(t, cat, "mlx4-1"), "rail.dev/modes"); got != "ipvlan" {
					t.Errorf("RoCE modes %q, want ipvlan", got)
				}
			}}},
		{name: "the node's nics list", machine: "h100x8-cx7x4", view: NodeView{Limits: Limits{NICs: []string{"mlx5_1"}, Source: "config"}},
			checks: []check{published("mlx5-1"), left("mlx5_0", "not in the node's nics list")}},
		{name: "a down port is tainted", machine: "down-bond",
			checks: []check{tainted("mlx5-1", "rail.dev/port-down"), untainted("mlx5-0")}},
		{name: "a down port leaves with downAs remove", machine: "down-bond", cfg: Config{DownAs: DownRemove},
			checks: []check{published("mlx5-0", "mlx5-bond-0")}},
		{name: "a down port leaves where the API server drops taints", machine: "down-bond", noTaints: true,
			checks: []check{published("mlx5-0", "mlx5-bond-0")}},
		{name: "protected NICs: never moved, a LAG shared", machine: "down-bond",
			view: NodeView{Protected: map[string]topology.Protection{
				"mlx5_bond_0": {LAG: true, Reasons: []topology.ProtectReason{{Kind: topology.ProtectBondMaster, Detail: "bond0"}}},
				"mlx5_0":      {Reasons: []topology.ProtectReason{{Kind: topology.ProtectAddress, Detail: "10.0.0.1/24"}}}}},
			checks: []check{published("mlx5-1", "mlx5-bond-0"), shared("mlx5-bond-0", 8), left("mlx5_0", "protected")}},
		{name: "protected NICs in move mode", machine: "down-bond", view: NodeView{Limits: Limits{Modes: []api.Mode{api.ModeMove}},
			Protected: map[string]topology.Protection{"mlx5_bond_0": {LAG: true, Reasons: []topology.ProtectReason{{Kind: topology.ProtectBondMaster, Detail: "bond0"}}}}},
			checks: []check{left("mlx5_bond_0", "move never takes the node's bond"), exclusive("mlx5-0")}},
		{name: "a NIC another driver publishes is left out", machine: "h100x8-cx7x4",
			checks: []check{published("mlx5-1", "mlx5-2", "mlx5-3"), left("mlx5_0", "published by DRA driver dra.net")}},
		{name: "unless publishNICsOf names the driver", machine: "h100x8-cx7x4", cfg: Config{PublishNICsOf: []string{"dra.net"}},
			checks: []check{published(cx7x4...)}},
		{name: "taken by a pod outside DRA", machine: "h100x8-cx7x4", view: NodeView{Limits: Limits{Modes: []api.Mode{api.ModeMove}},
			Uses:      []Use{{NIC: "mlx5_2", Pod: "ml/old", Mode: api.ModeMove}, {NIC: "mlx5_3", Pod: "ml/claimed", Mode: api.ModeMove}},
			ClaimPods: map[string]bool{"ml/claimed": true}},
			checks: []check{tainted("mlx5-2", "rail.dev/taken"), untainted("mlx5-3")}},
		{name: "a shared port beside child interfaces outside DRA stays, a moved one is taken", machine: "h100x8-cx7x4",
			view:   NodeView{Uses: []Use{{NIC: "mlx5_0", Pod: "ml/a", Mode: api.ModeIPoIB}, {NIC: "mlx5_1", Pod: "ml/b", Mode: api.ModeMove}}},
			checks: []check{untainted("mlx5-0"), tainted("mlx5-1", "rail.dev/taken")}},
		{name: "dual-port: one device per port", machine: "dualport-2s",
			checks: []check{published("mlx4-0", "mlx4-0-p2", "mlx4-1", "mlx4-1-p2", "mlx5-0"), func(t *testing.T, _ *topology.Machine, cat Catalog) {
				d := find(t, cat, "mlx4-0-p2")
				if p, _ := num(d, "rail.dev/port"); p != 2 || str(d, "rail.dev/rdmaDevice") != "mlx4_0" {
					t.Errorf("port %d rdmaDevice %q, want 2 mlx4_0", p, str(d, "rail.dev/rdmaDevice"))
				}
				if got := str(find(t, cat, "mlx4-1"), "rail.dev/modes"); got != "macvlan, ipvlan" {
					t.Errorf("RoCE modes %q, want macvlan, ipvlan", got)
				}
			}}},
		{name: "Hyper-V: roots never match, NUMA does", machine: "azure-ndh100v5",
			checks: []check{numa("mlx5-ib0", 0), numa("mlx5-ib7", 1), func(t *testing.T, m *topology.Machine, cat Catalog) {
				for _, g := range m.GPUs {
					for _, d := range cat.Devices {
						if str(d, AttrPCIeRoot) == g.Root {
							t.Errorf("%s shares root %s with GPU%d", d.Name, g.Root, g.Index)
						}
					}
				}
			}}},
		{name: "vf mode: a device per attachable VF, the PF's port none", machine: "h100x8-cx7x8-sriov",
			view: NodeView{Limits: Limits{Modes: []api.Mode{api.ModeVF}}},
			checks: []check{left("mlx5_0", "no mode the node serves fits"), left("mlx5_8", "an SR-IOV VF"), func(t *testing.T, m *topology.Machine, cat Catalog) {
				if len(cat.Devices) != 27 {
					t.Errorf("%d VF devices, want 27 (7 PFs × 4, one bound to vfio-pci): %v", len(cat.Devices), names(cat.Devices))
				}
				d := find(t, cat, "mlx5-0-vf1")
				vf := m.PFs[0].VFs[1]
				if str(d, AttrPCIBusID) != vf.PCI || str(d, "rail.dev/pfPCI") != vf.PF || str(d, "rail.dev/function") != "vf" ||
					str(d, "rail.dev/rdmaDevice") != vf.RDMA || str(d, AttrPCIeRoot) != m.GPUs[0].Root || d.AllowMultipleAllocations != nil {
					t.Errorf("VF device %+v for %+v", d.Attributes, vf)
				}
				if e := cat.Entries["mlx5-0-vf1"]; e.Kind != KindVF || e.VF != vf.PCI || e.NIC != "mlx5_0" {
					t.Errorf("entry %+v", e)
				}
			}, left(vfioVF(t, "h100x8-cx7x8-sriov"), "vfio-pci")}},
		{name: "vf mode: a VF held outside DRA is taken, one held by a claim's pod stays without its netdev, their PF's port is not", machine: "h100x8-cx7x8-sriov",
			view: NodeView{Limits: Limits{Modes: []api.Mode{api.ModeVF}}},
			checks: []check{func(t *testing.T, m *topology.Machine, _ Catalog) {
				vfs := m.PFs[1].VFs
				modes := []api.Mode{api.ModeVF, api.ModeMove}
				view := NodeView{Machine: m, Limits: Limits{Modes: modes}, ClaimPods: map[string]bool{"ml/c": true},
					Uses: []Use{{NIC: "mlx5_1", VF: vfs[0].PCI, Pod: "ml/x", Mode: api.ModeVF}, {NIC: "mlx5_1", VF: vfs[1].PCI, Pod: "ml/c", Mode: api.ModeVF}}}
				view.Machine.PFs[1].VFs[1].Netdev = "" // in the pod
				cat := Build(settled(t, Config{}), view, false, false)
				tainted("mlx5-1-vf0", "rail.dev/taken")(t, m, cat)
				untainted("mlx5-1-vf1")(t, m, cat)
				untainted("mlx5-1")(t, m, cat)
			}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := machine(t, tc.machine)
			view := tc.view
			view.Machine = m
			if strings.Contains(tc.name, "another driver") || strings.Contains(tc.name, "publishNICsOf") {
				n, _ := m.NICByName("mlx5_0")
				view.Others = map[string]string{n.PCI: "dra.net"}
			}
			cat := Build(settled(t, tc.cfg), view, tc.noTaints, tc.noShare)
			for _, c := range tc.checks {
				c(t, m, cat)
			}
			for _, d := range cat.Devices {
				if len(d.Attributes)+len(d.Capacity) > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
					t.Errorf("%s: %d attributes and capacities", d.Name, len(d.Attributes)+len(d.Capacity))
				}
			}
		})
	}
}

// vfioVF is the PCI address of the VF the sriov machine binds to vfio-pci.
func vfioVF(t *testing.T, name string) string {
	t.Helper()
	for _, pf := range machine(t, name).PFs {
		for _, vf := range pf.VFs {
			if vf.Driver == topology.VFIODriver {
				return vf.PCI
			}
		}
	}
	t.Fatal("no vfio-pci VF")
	return ""
}

func TestDeviceNames(t *testing.T) {
	for _, tc := range []struct{ nic, want string }{
		{"mlx5_0", "mlx5-0"}, {"mlx4_0:2", "mlx4-0-p2"}, {"mlx5_bond_0", "mlx5-bond-0"}, {"rxe0", "rxe0"}, {"MLX_X", "mlx-x"},
	} {
		if got := deviceName(tc.nic); got != tc.want {
			t.Errorf("deviceName(%q) = %q, want %q", tc.nic, got, tc.want)
		}
	}
	if got := taintValue("port mlx5_1 is DOWN"); got != "port_mlx5_1_is_DOWN" {
		t.Errorf("taintValue: %q", got)
	}
}

func TestConfigNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{DriverName: "Rail_Dev"}, "dra.driverName"},
		{Config{KubeletDir: "var/lib/kubelet"}, "dra.kubeletDir"},
		{Config{SharedSlots: -1}, "dra.sharedSlots"},
		{Config{DownAs: "hide"}, "dra.downAs"},
		{Config{PublishNICsOf: []string{"rail.dev"}}, "dra.publishNICsOf[0]"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", tc.cfg, err, tc.want)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestBuildSoftRoCE: a softRoCE VM's NICs have no RDMA device; each is a
// shared device named by its netdev, with its PCI function, root and
// netdev, function "netdev", no rdmaDevice or port attribute, the child
// modes (never move, which a softRoCE node refuses), and a taint when its
// netdev is down. Before netdev NICs the VM published nothing.
func TestBuildSoftRoCE(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.Write(root, "softroce-vm", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.DiscoverWith(root, topology.Options{NetdevNICs: true})
	if err != nil {
		t.Fatal(err)
	}
	down := slices.Clone(m.NICs)
	for i := range down {
		if down[i].Name == "eth2" {
			down[i].State = "DOWN"
		}
	}
	modes := []api.Mode{api.ModeMacvlan, api.ModeIPVLAN, api.ModeIPoIB, api.ModeVF} // placement.Limits.ServedModes of a softRoCE node
	for _, tc := range []struct {
		name    string
		machine *topology.Machine
		tainted string
	}{
		{name: "every NIC up", machine: m},
		{name: "eth2's netdev down", machine: m.WithNICs(down, m.Problems), tainted: "eth2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := Build(settled(t, Config{}), NodeView{Machine: tc.machine, Limits: Limits{Modes: modes}}, false, false)
			if got := names(cat.Devices); !slices.Equal(got, []string{"eth0", "eth1", "eth2"}) {
				t.Fatalf("devices %v, want eth0 eth1 eth2 (left: %v)", got, cat.Left)
			}
			nic, _ := tc.machine.NICByName("eth1")
			d := find(t, cat, "eth1")
			for attr, want := range map[resourcev1.QualifiedName]string{AttrPCIBusID: nic.PCI, AttrPCIeRoot: "pci0000:00",
				"rail.dev/netdev": "eth1", "rail.dev/function": "netdev", "rail.dev/linkLayer": "Ethernet", "rail.dev/modes": "macvlan, ipvlan",
				"rail.dev/rdmaDevice": ""} {
				if got := str(d, attr); got != want {
					t.Errorf("eth1 %s = %q, want %q", attr, got, want)
				}
			}
			if _, ok := num(d, "rail.dev/port"); ok {
				t.Error("eth1 has a port attribute: it has no RDMA port")
			}
			if e := cat.Entries["eth1"]; e.Kind != KindShared || e.NIC != "eth1" {
				t.Errorf("eth1 entry %+v, want a shared device of NIC eth1", e)
			}
			for _, dev := range []string{"eth1", "eth2"} {
				taints := find(t, cat, dev).Taints
				if want := dev == tc.tainted; (len(taints) == 1 && taints[0].Key == "rail.dev/port-down") != want {
					t.Errorf("%s taints %+v, want port-down: %v", dev, taints, want)
				}
			}
		})
	}
}
