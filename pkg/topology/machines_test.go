package topology_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// writeMachine writes a built-in machine into a fresh directory.
func writeMachine(t testing.TB, name string, opt fakesys.Options) (string, *fakesys.Spec) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	spec, err := fakesys.Write(root, name, opt)
	if err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	return root, spec
}

func discover(t testing.TB, root string) *topology.Machine {
	t.Helper()
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatalf("discover %s: %v", root, err)
	}
	return m
}

// machineCase is the expected view of one built-in machine: NIC columns,
// one matrix row per GPU ("PIX PHB SYS SYS"), the affinity per GPU, the
// devices with problems and the NICs sysfs shows to be the node's own
// ("mlx5_bond_0 lag bond-master: ens3f0np0, ens3f1np1").
type machineCase struct {
	nics      string
	matrix    []string
	affinity  []string
	problems  []string
	protected []string
	// netdevNICs: read as a softRoCE node reads it (Options.NetdevNICs)
	netdevNICs bool
}

var machineCases = map[string]machineCase{
	"h100x8-cx7x4": {
		nics: "mlx5_0 mlx5_1 mlx5_2 mlx5_3",
		matrix: []string{
			"PIX PHB SYS SYS", "PIX PHB SYS SYS", "PHB PIX SYS SYS", "PHB PIX SYS SYS",
			"SYS SYS PIX PHB", "SYS SYS PIX PHB", "SYS SYS PHB PIX", "SYS SYS PHB PIX",
		},
		affinity: []string{"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1", "mlx5_2", "mlx5_2", "mlx5_3", "mlx5_3"},
	},
	"gpu8-nic8": {
		nics: "mlx5_0 mlx5_1 mlx5_2 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_7 mlx5_8 mlx5_9 mlx5_bond_0",
		matrix: []string{
			"PIX PHB NODE NODE NODE SYS SYS SYS SYS SYS SYS",
			"PHB PIX NODE NODE NODE SYS SYS SYS SYS SYS SYS",
			"NODE NODE PIX PHB PHB SYS SYS SYS SYS SYS SYS",
			"NODE NODE PHB PIX PHB SYS SYS SYS SYS SYS SYS",
			"SYS SYS SYS SYS SYS PIX PHB NODE NODE NODE NODE",
			"SYS SYS SYS SYS SYS PHB PIX NODE NODE NODE NODE",
			"SYS SYS SYS SYS SYS NODE NODE PIX PHB PHB PHB",
			"SYS SYS SYS SYS SYS NODE NODE PHB PIX PHB PHB",
		},
		affinity:  []string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8"},
		protected: []string{"mlx5_bond_0 lag bond-master: ens11f0np0, ens11f1np1"},
	},
	"twolevel-2s": {
		nics: "mlx5_0 mlx5_1 mlx5_2 mlx5_3",
		matrix: []string{
			"PIX PXB SYS SYS", "PIX PXB SYS SYS", "PXB PXB SYS SYS", "PXB PXB SYS SYS",
			"SYS SYS PIX PHB", "SYS SYS PIX PHB", "SYS SYS PHB PHB", "SYS SYS PHB PHB",
		},
		// GPU2/3 tie at PXB and GPU6/7 at PHB: spread to the NIC the
		// PIX GPUs left free.
		affinity: []string{"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1", "mlx5_2", "mlx5_2", "mlx5_3", "mlx5_3"},
	},
	"down-bond": {
		nics:   "mlx5_0 mlx5_1 mlx5_bond_0",
		matrix: []string{"PIX PHB PHB", "PIX PHB PHB", "PHB PIX PHB", "PHB PIX PHB"},
		// mlx5_1 is DOWN: GPU2/3 tie at PHB between mlx5_0 (two GPUs on
		// it) and the bond (none), so both go to the bond.
		affinity:  []string{"mlx5_0", "mlx5_0", "mlx5_bond_0", "mlx5_bond_0"},
		problems:  []string{"mlx5_1: port 1 DOWN (Disabled)"},
		protected: []string{"mlx5_bond_0 lag bond-master: ens3f0np0, ens3f1np1"},
	},
	// The rails as on h100x8-cx7x4, the front-end NIC mlx5_2 on a root
	// port of socket 0 (PHB from GPU0-3, SYS from GPU4-7), the LAG on a
	// root port of socket 1. sysfs alone shows the LAG's bond; the
	// front-end NIC's address and route are the daemon's to find.
	"frontend-lag": {
		nics: "mlx5_0 mlx5_1 mlx5_2 mlx5_3 mlx5_4 mlx5_bond_0",
		matrix: []string{
			"PIX PHB PHB SYS SYS SYS", "PIX PHB PHB SYS SYS SYS", "PHB PIX PHB SYS SYS SYS", "PHB PIX PHB SYS SYS SYS",
			"SYS SYS SYS PIX PHB PHB", "SYS SYS SYS PIX PHB PHB", "SYS SYS SYS PHB PIX PHB", "SYS SYS SYS PHB PIX PHB",
		},
		affinity:  []string{"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1", "mlx5_3", "mlx5_3", "mlx5_4", "mlx5_4"},
		protected: []string{"mlx5_bond_0 lag bond-master: ens6f0np0, ens6f1np1"},
	},
	// One dual-port ConnectX-5 = two PCI functions under GPU0/GPU1's
	// switch: PIX from both, SYS from the other socket. mlx5_1's port has
	// no cable, so every GPU gets mlx5_0.
	"v100x4-cx5-dualport": {
		nics:     "mlx5_0 mlx5_1",
		matrix:   []string{"PIX PIX", "PIX PIX", "SYS SYS", "SYS SYS"},
		affinity: []string{"mlx5_0", "mlx5_0", "mlx5_0", "mlx5_0"},
		problems: []string{"mlx5_1: port 1 DOWN (Polling)"},
	},
	"lab-1x1": {
		nics:     "mlx5_0",
		matrix:   []string{"PHB"},
		affinity: []string{"mlx5_0"},
	},
	// numa_node -1 on a VM of one NUMA node is that node: no problem.
	"h200-vm": {
		nics:     "mlx5_0",
		matrix:   []string{"PHB"},
		affinity: []string{"mlx5_0"},
	},
	"sf-1s": {
		nics:   "mlx5_0 mlx5_1 mlx5_2",
		matrix: []string{"PIX PIX PIX", "PHB PHB PHB"},
		// GPU1 ties at PHB over the PF and its two sub-functions: it takes
		// one GPU0 left free.
		affinity: []string{"mlx5_0", "mlx5_1"},
	},
	"dualport-2s": {
		// Each port of mlx4_0 and mlx4_1 is a target: GPU0/GPU1 spread over
		// the two ports of mlx4_0, GPU2/GPU3 over those of mlx4_1.
		nics: "mlx4_0 mlx4_0:2 mlx4_1 mlx4_1:2 mlx5_0",
		matrix: []string{
			"PIX PIX PHB PHB SYS", "PIX PIX PHB PHB SYS", "PHB PHB PIX PIX SYS", "PHB PHB PIX PIX SYS",
			"SYS SYS SYS SYS PIX",
		},
		affinity: []string{"mlx4_0", "mlx4_0:2", "mlx4_1", "mlx4_1:2", "mlx5_0"},
	},
	// Hand-computed in realmachines_test.go, which also checks the
	// sources and the NCCL topology file.
	"xe8640": {
		nics:     "mlx5_0 mlx5_1",
		matrix:   []string{"PIX SYS", "NODE SYS", "SYS NODE", "SYS PHB"},
		affinity: []string{"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1"},
	},
	"gb200-tray": {
		nics:     "mlx5_0 mlx5_1 mlx5_2 mlx5_3",
		matrix:   []string{"P2C P2C SYS SYS", "P2C P2C SYS SYS", "SYS SYS P2C P2C", "SYS SYS P2C P2C"},
		affinity: []string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"},
	},
	"azure-ndh100v5": {
		nics: "mlx5_ib0 mlx5_ib1 mlx5_ib2 mlx5_ib3 mlx5_ib4 mlx5_ib5 mlx5_ib6 mlx5_ib7",
		matrix: []string{
			"NODE NODE NODE NODE SYS SYS SYS SYS", "NODE NODE NODE NODE SYS SYS SYS SYS",
			"NODE NODE NODE NODE SYS SYS SYS SYS", "NODE NODE NODE NODE SYS SYS SYS SYS",
			"SYS SYS SYS SYS NODE NODE NODE NODE", "SYS SYS SYS SYS NODE NODE NODE NODE",
			"SYS SYS SYS SYS NODE NODE NODE NODE", "SYS SYS SYS SYS NODE NODE NODE NODE",
		},
		// NUMA only, then spread: one NIC per GPU in name order.
		affinity: []string{"mlx5_ib0", "mlx5_ib1", "mlx5_ib2", "mlx5_ib3", "mlx5_ib4", "mlx5_ib5", "mlx5_ib6", "mlx5_ib7"},
		problems: []string{"PCI topology: " + topology.FlatPCIProblem},
	},
	// Each GPU's PF and that PF's VFs are PIX (a VF sits where its PF
	// does); the other PFs of its socket PHB. Each GPU picks its own PF.
	"h100x8-cx7x8-sriov": {
		nics:     sriovNICs(),
		matrix:   sriovMatrix(),
		affinity: []string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"},
	},
	// The IB VFs (mlx5_2-5 of mlx5_0, mlx5_6-9 of mlx5_1) sit where their
	// PFs do; each GPU picks the PF of its switch.
	"h100x2-cx7ib-sriov": {
		nics: "mlx5_0 mlx5_1 mlx5_2 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_7 mlx5_8 mlx5_9",
		matrix: []string{
			"PIX PHB PIX PIX PIX PIX PHB PHB PHB PHB",
			"PHB PIX PHB PHB PHB PHB PIX PIX PIX PIX",
		},
		affinity: []string{"mlx5_0", "mlx5_1"},
	},
	// igb PFs have no RDMA device: the rig's rxe0/rxe1 on pf0/pf1 are the
	// NICs, placed at their PFs. GPU0 shares pf1's switch; GPU1 ties at
	// PHB and takes the NIC GPU0 left free.
	"sriov-vm-igb": {
		nics:     "rxe0 rxe1",
		matrix:   []string{"PHB PIX", "PHB PHB"},
		affinity: []string{"rxe1", "rxe0"},
	},
	// A softRoCE VM: its virtio-net and e1000e functions, without RDMA
	// devices, are NICs by their netdevs; each GPU shares a switch with one.
	"softroce-vm": {
		nics:       "eth0 eth1 eth2",
		matrix:     []string{"PHB PIX PHB", "PHB PHB PIX"},
		affinity:   []string{"eth1", "eth2"},
		netdevNICs: true,
	},
	"softroce": {
		nics:     "rxe0",
		matrix:   []string{"SYS"},
		affinity: []string{"rxe0"},
	},
}

// sriovPFOf is the PF (0-7) of each NIC of h100x8-cx7x8-sriov in name
// order: mlx5_0-7 the PFs, then 4 VFs for each of PF 0-5 and 3 for PF 6
// (its fourth is bound to vfio-pci), PF 7 none.
func sriovPFOf() []int {
	pfs := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for pf := range 7 {
		vfs := 4
		if pf == 6 {
			vfs = 3
		}
		for range vfs {
			pfs = append(pfs, pf)
		}
	}
	return pfs
}

func sriovNICs() string {
	var names []string
	for i := range sriovPFOf() {
		names = append(names, fmt.Sprintf("mlx5_%d", i))
	}
	return strings.Join(names, " ")
}

func sriovMatrix() []string {
	var rows []string
	for gpu := range 8 {
		var row []string
		for _, pf := range sriovPFOf() {
			switch {
			case pf == gpu:
				row = append(row, "PIX")
			case pf/4 == gpu/4:
				row = append(row, "PHB")
			default:
				row = append(row, "SYS")
			}
		}
		rows = append(rows, strings.Join(row, " "))
	}
	return rows
}

func TestBuiltinMachinesAreAllTested(t *testing.T) {
	var tested []string
	for name := range machineCases {
		tested = append(tested, name)
	}
	slices.Sort(tested)
	if got := fakesys.Names(); !slices.Equal(got, tested) {
		t.Fatalf("fakesys.Names() = %v, machineCases cover %v: add a case for every machine", got, tested)
	}
}

func TestMachineMatrixAndAffinity(t *testing.T) {
	for name, tc := range machineCases {
		t.Run(name, func(t *testing.T) {
			root, _ := writeMachine(t, name, fakesys.Options{})
			m, err := topology.DiscoverWith(root, topology.Options{NetdevNICs: tc.netdevNICs})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, n := range m.NICs {
				names = append(names, n.Name)
			}
			if got := strings.Join(names, " "); got != tc.nics {
				t.Fatalf("NICs = %q, want %q", got, tc.nics)
			}
			if len(m.GPUs) != len(tc.matrix) {
				t.Fatalf("%d GPUs, want %d", len(m.GPUs), len(tc.matrix))
			}
			for i, g := range m.GPUs {
				var row []string
				for _, n := range m.NICs {
					row = append(row, m.Distance(g, n).String())
				}
				if got := strings.Join(row, " "); got != tc.matrix[i] {
					t.Errorf("GPU%d row = %q, want %q", g.Index, got, tc.matrix[i])
				}
			}
			aff := m.Affinity()
			if len(aff) != len(tc.affinity) {
				t.Errorf("affinity has %d GPUs, want %d: %v", len(aff), len(tc.affinity), aff)
			}
			for gpu, want := range tc.affinity {
				if aff[gpu] != want {
					t.Errorf("affinity GPU%d = %q, want %q", gpu, aff[gpu], want)
				}
			}
			var problems []string
			for _, p := range m.Problems {
				problems = append(problems, p.Device+": "+p.Reason)
			}
			if !slices.Equal(problems, tc.problems) {
				t.Errorf("problems = %q, want %q", problems, tc.problems)
			}
			if got := protectedLines(m.LinkProtection()); !slices.Equal(got, tc.protected) {
				t.Errorf("protected = %q, want %q", got, tc.protected)
			}
		})
	}
}

// TestMachineMatchesSpec checks every discovered device against what the
// builder says it wrote.
func TestMachineMatchesSpec(t *testing.T) {
	for _, name := range fakesys.Names() {
		t.Run(name, func(t *testing.T) {
			root, spec := writeMachine(t, name, fakesys.Options{})
			m := discover(t, root)
			if len(m.GPUs) != len(spec.GPUs) {
				t.Fatalf("%d GPUs, spec has %d", len(m.GPUs), len(spec.GPUs))
			}
			for i, want := range spec.GPUs {
				g := m.GPUs[i]
				want.NUMA = seenNUMA(spec, want.NUMA)
				if g.Index != want.Index || g.PCI != want.PCI || g.UUID != want.UUID || g.Minor != want.Minor || g.NUMA != want.NUMA {
					t.Errorf("GPU %d = %+v, spec %+v", i, g, want)
				}
				if !strings.HasPrefix(g.Root, "pci"+g.PCI[:5]) || (len(g.Path) == 0) != m.FlatPCI {
					t.Errorf("GPU %d location root=%q path=%v", i, g.Root, g.Path)
				}
			}
			targets := spec.Targets()
			if len(m.NICs) != len(targets) {
				t.Fatalf("%d NICs, spec has %d ports", len(m.NICs), len(targets))
			}
			for _, want := range targets {
				n, ok := m.NICByName(want.Name)
				if !ok {
					t.Errorf("NIC %s not discovered", want.Name)
					continue
				}
				want.NUMA = seenNUMA(spec, want.NUMA)
				checkNIC(t, n, want)
			}
			if m.RdmaCM == nil || m.RdmaCM.Major != spec.RdmaCM.Major || m.RdmaCM.Minor != spec.RdmaCM.Minor ||
				m.RdmaCM.Path != "/dev/infiniband/rdma_cm" {
				t.Errorf("rdma_cm = %+v, spec %+v", m.RdmaCM, spec.RdmaCM)
			}
		})
	}
}

// seenNUMA is the NUMA node discovery gives a device written with
// numa_node numa: -1 on a machine of one node is that node.
func seenNUMA(spec *fakesys.Spec, numa int) int {
	if numa < 0 && spec.Nodes == 1 {
		return 0
	}
	return numa
}

func checkNIC(t *testing.T, n topology.NIC, want fakesys.NICSpec) {
	t.Helper()
	if n.PCI != want.PCI || n.Netdev != want.Netdev || string(n.LinkLayer) != want.LinkLayer ||
		n.State != want.State || n.NUMA != want.NUMA || n.Virtual != want.Virtual || n.VF != want.VF || n.Bond != want.Bond {
		t.Errorf("NIC %s = pci %q netdev %q %s %s numa %d virtual %v vf %v bond %v; spec %+v",
			n.Name, n.PCI, n.Netdev, n.LinkLayer, n.State, n.NUMA, n.Virtual, n.VF, n.Bond, want)
	}
	if n.Uverbs == nil || n.UverbsName != want.Uverbs.Name || n.Uverbs.Major != want.Uverbs.Major ||
		n.Uverbs.Minor != want.Uverbs.Minor || n.Uverbs.Path != "/dev/infiniband/"+want.Uverbs.Name {
		t.Errorf("NIC %s uverbs = %+v, spec %+v", n.Name, n.Uverbs, want.Uverbs)
	}
	if len(n.Ports) != 1 {
		t.Fatalf("NIC %s has %d ports, want 1", n.Name, len(n.Ports))
	}
	p := n.Ports[0]
	if p.Umad == nil || p.Umad.Name != want.Umad.Name || p.Umad.Minor != want.Umad.Minor {
		t.Errorf("NIC %s umad = %+v, spec %+v", n.Name, p.Umad, want.Umad)
	}
	switch {
	case want.Issm == nil && p.Issm != nil:
		t.Errorf("NIC %s has issm %+v, spec has none", n.Name, p.Issm)
	case want.Issm != nil && (p.Issm == nil || p.Issm.Name != want.Issm.Name || p.Issm.Minor != want.Issm.Minor):
		t.Errorf("NIC %s issm = %+v, spec %+v", n.Name, p.Issm, want.Issm)
	}
	if want.State == "ACTIVE" && p.PhysState != "LinkUp" {
		t.Errorf("NIC %s phys state %q, want LinkUp", n.Name, p.PhysState)
	}
	if n.NodeGUID == "" || p.Rate == "" {
		t.Errorf("NIC %s: node GUID %q rate %q, want both", n.Name, n.NodeGUID, p.Rate)
	}
}

// protectedLines spells protections as "name [lag] kind: detail", sorted.
func protectedLines(p map[string]topology.Protection) []string {
	var out []string
	for name, prot := range p {
		line := name
		if prot.LAG {
			line += " lag"
		}
		for _, r := range prot.Reasons {
			line += " " + string(r.Kind) + ": " + r.Detail
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}
