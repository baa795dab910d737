package placement

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// vfOf is VF k of the PF whose NIC is pfNIC.
func vfOf(t *testing.T, m *topology.Machine, pfNIC string, k int) topology.VF {
	t.Helper()
	for _, pf := range m.PFs {
		if nic, ok := m.PFNIC(pf); ok && nic.Name == pfNIC {
			return pf.VFs[k]
		}
	}
	t.Fatalf("no PF %s", pfNIC)
	return topology.VF{}
}

// holdVFs records VFs k... of pfNIC as held in vf mode by pod.
func holdVFs(t *testing.T, m *topology.Machine, u *Usage, pod, pfNIC string, ks ...int) {
	for _, k := range ks {
		vf := vfOf(t, m, pfNIC, k)
		u.AddVF(pfNIC, vf.PCI, pod+"/"+vf.PCI, pod, pod)
	}
}

// vfOutcome is "PF:index[gpus]" per pick, or the error.
func vfOutcome(t *testing.T, m *topology.Machine, picks []VFPick, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var out []string
	for _, p := range picks {
		pf, _ := m.PFByPCI(p.VF.PF)
		if nic, _ := m.PFNIC(pf); nic.Name != p.PF.Name {
			t.Errorf("pick %+v: VF of PF %s, its NIC %s", p, p.VF.PF, nic.Name)
		}
		out = append(out, fmt.Sprintf("%s:%d%v", p.PF.Name, p.VF.Index, p.GPUs))
	}
	return strings.Join(out, " ")
}

func TestChooseVFs(t *testing.T) {
	n := node(t, "h100x8-cx7x8-sriov")
	m := n.Machine
	pix := bound(topology.PIX, "netconf maxDistance")
	tests := []struct {
		name string
		in   Input
		use  func(*Usage)
		want string // vfOutcome, or an error's text after "error: "
	}{
		{name: "closest PF, first VF", in: Input{GPUs: []int{0}}, want: "mlx5_0:0[0]"},
		{name: "each GPU its own PF", in: Input{GPUs: []int{0, 5}}, want: "mlx5_0:0[0] mlx5_5:0[5]"},
		{name: "a held VF is skipped", in: Input{GPUs: []int{0}},
			use: func(u *Usage) { holdVFs(t, m, u, "ns/a", "mlx5_0", 0, 1) }, want: "mlx5_0:2[0]"},
		{name: "a VF moved as a NIC of its own is held", in: Input{GPUs: []int{0}},
			use: func(u *Usage) { u.Add("mlx5_8", "a/rail0", "a", "ns/a", api.ModeMove) }, want: "mlx5_0:1[0]"},
		{name: "PF full: the next closest, by load then name", in: Input{GPUs: []int{0}},
			use: func(u *Usage) {
				holdVFs(t, m, u, "ns/a", "mlx5_0", 0, 1, 2, 3)
				holdVFs(t, m, u, "ns/b", "mlx5_1", 0)
			}, want: "mlx5_2:0[0]"},
		{name: "sriov_numvfs 0: the next closest", in: Input{GPUs: []int{7}}, want: "mlx5_4:0[7]"},
		{name: "vfio-pci VF is never free", in: Input{GPUs: []int{6}},
			use: func(u *Usage) { holdVFs(t, m, u, "ns/a", "mlx5_6", 0, 1, 2) }, want: "mlx5_4:0[6]"},
		{name: "GPUs on one PF share a VF", in: Input{GPUs: []int{0, 1}, NICs: []string{"mlx5_0"}}, want: "mlx5_0:0[0 1]"},
		{name: "one VF per GPU when asked", in: Input{GPUs: []int{0, 1}, NICs: []string{"mlx5_0"}, VFPerGPU: true},
			want: "mlx5_0:0[0] mlx5_0:1[1]"},
		{name: "one VF per GPU: a PF out of VFs sends the rest on", in: Input{GPUs: []int{0, 1}, NICs: []string{"mlx5_0", "mlx5_4"}, VFPerGPU: true},
			use: func(u *Usage) { holdVFs(t, m, u, "ns/a", "mlx5_0", 0, 1, 2) }, want: "mlx5_0:3[0] mlx5_4:0[1]"},
		{name: "one VF per GPU: spread by load", in: Input{GPUs: []int{0, 1}, NICs: []string{"mlx5_0", "mlx5_3"}, VFPerGPU: true},
			use: func(u *Usage) { holdVFs(t, m, u, "ns/a", "mlx5_0", 0, 1) }, want: "mlx5_0:2[0] mlx5_3:0[1]"},
		{name: "one VF per GPU: none left", in: Input{GPUs: []int{0, 1}, NICs: []string{"mlx5_0"}, VFPerGPU: true},
			use: func(u *Usage) { holdVFs(t, m, u, "ns/a", "mlx5_0", 0, 1, 2) }, want: "error: no usable PF for mode vf: gpu 1: no usable NIC: mlx5_0 its free VFs (1) taken by this pod's other GPUs"},
		{name: "PF inside a pod", in: Input{GPUs: []int{0}, NICs: []string{"mlx5_0"}},
			use: func(u *Usage) { u.Add("mlx5_0", "a/rail0", "a", "ns/a", api.ModeMove) }, want: "error: no usable PF for mode vf: gpu 0: no usable NIC: mlx5_0 PF 0000:19:00.0 is itself inside pod ns/a"},
		{name: "no VFs: says so", in: Input{GPUs: []int{7}, NICs: []string{"mlx5_7"}}, want: "error: sriov_numvfs 0 of 4"},
		{name: "all held: names the holders", in: Input{GPUs: []int{0}, NICs: []string{"mlx5_0"}},
			use: func(u *Usage) { holdVFs(t, m, u, "ns/a", "mlx5_0", 0, 1, 2, 3) }, want: "error: no free VF on PF 0000:19:00.0 (4 VFs, 4 held by ns/a"},
		{name: "maxDistance refuses the next closest", in: Input{GPUs: []int{7}, MaxDistance: pix}, want: "error: distance bound: GPU 7: the closest free NIC mlx5_4 is PHB, beyond netconf maxDistance PIX"},
		{name: "selector names no PF", in: Input{GPUs: []int{0}, NICs: []string{"mlx5_8"}}, want: "error: no PF for mode vf: the selector (mlx5_8) names no SR-IOV PF's NIC"},
		{name: "InfiniBand asked of RoCE PFs", in: Input{GPUs: []int{0}, LinkLayer: topology.InfiniBand}, want: "error: no usable PF for mode vf"},
		{name: "no GPUs: the least loaded PF", in: Input{},
			use: func(u *Usage) { holdVFs(t, m, u, "ns/a", "mlx5_0", 0) }, want: "mlx5_1:0[]"},
		{name: "maxNICs", in: Input{GPUs: []int{0, 1, 2}, MaxNICs: 2}, want: "mlx5_0:0[0] mlx5_1:0[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			use := NewUsage()
			if tt.use != nil {
				tt.use(use)
			}
			tt.in.Mode = api.ModeVF
			picks, err := n.ChooseVFs(tt.in, use)
			got := vfOutcome(t, m, picks, err)
			if got != tt.want && !(strings.HasPrefix(tt.want, "error: ") && strings.Contains(got, strings.TrimPrefix(tt.want, "error: "))) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestChooseVFsSpreadsByLoad: pods whose GPU's PF has no VFs spread over
// the equally close PFs by how many of their VFs are held, and no two
// picks ever name one VF.
func TestChooseVFsSpreadsByLoad(t *testing.T) {
	n := node(t, "h100x8-cx7x8-sriov")
	use := NewUsage()
	var got []string
	seen := map[string]bool{}
	for pod := range 9 {
		picks, err := n.ChooseVFs(Input{GPUs: []int{7}, Mode: api.ModeVF}, use)
		if err != nil {
			t.Fatalf("pod %d: %v", pod, err)
		}
		vf := picks[0].VF
		if seen[vf.PCI] {
			t.Fatalf("pod %d got VF %s again", pod, vf.PCI)
		}
		seen[vf.PCI] = true
		use.AddVF(picks[0].PF.Name, vf.PCI, fmt.Sprintf("p%d/rail0", pod), fmt.Sprintf("p%d", pod), fmt.Sprintf("ns/p%d", pod))
		got = append(got, picks[0].PF.Name)
	}
	// mlx5_4, 5, 6 are PHB from GPU 7: round robin; mlx5_6 has 3 VFs.
	want := []string{"mlx5_4", "mlx5_5", "mlx5_6", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_4", "mlx5_5", "mlx5_6"}
	if !slices.Equal(got, want) {
		t.Fatalf("PFs %v, want %v", got, want)
	}
	picks, err := n.ChooseVFs(Input{GPUs: []int{7}, Mode: api.ModeVF}, use)
	if err != nil || picks[0].PF.Name != "mlx5_4" || picks[0].VF.Index != 3 {
		t.Fatalf("10th pod: %+v %v, want mlx5_4's last VF", picks, err)
	}
}

// TestVFHoldersKeepOtherModesOff: a VF held in vf mode is not moved as a
// NIC of its own, and its PF is not moved (other modes may still share it).
func TestVFHoldersKeepOtherModesOff(t *testing.T) {
	n := node(t, "h100x8-cx7x8-sriov")
	use := NewUsage()
	holdVFs(t, n.Machine, use, "ns/a", "mlx5_0", 0)
	picks, err := n.Choose(Input{GPUs: []int{0}, Mode: api.ModeMove}, use)
	if err != nil || picks[0].NIC.Name != "mlx5_9" {
		t.Fatalf("move: %+v %v, want mlx5_9 (mlx5_0 is the PF of a held VF, mlx5_8 that VF)", picks, err)
	}
	picks, err = n.Choose(Input{GPUs: []int{0}, Mode: api.ModeMacvlan}, use)
	if err != nil || picks[0].NIC.Name != "mlx5_0" {
		t.Fatalf("macvlan: %+v %v, want the PF mlx5_0 (shared)", picks, err)
	}
	if _, err := n.Choose(Input{GPUs: []int{0}, Mode: api.ModeVF}, use); err == nil {
		t.Fatal("Choose took mode vf")
	}
}

// TestChooseVFsOnTheRig: igb PFs have no RDMA device of their own; the
// rxe on a PF places it, and a PF with none (pf2) serves no vf pod.
func TestChooseVFsOnTheRig(t *testing.T) {
	n := node(t, "sriov-vm-igb")
	picks, err := n.ChooseVFs(Input{GPUs: []int{0, 1}, Mode: api.ModeVF}, NewUsage())
	if err != nil {
		t.Fatal(err)
	}
	if len(picks) != 2 || picks[0].PF.Name != "rxe1" || picks[1].PF.Name != "rxe0" || picks[0].VF.Netdev == "" || picks[0].VF.Driver != "igbvf" {
		t.Fatalf("picks %+v, want a VF of pf1 (rxe1) for GPU 0 and of pf0 (rxe0) for GPU 1", picks)
	}
}

// BenchmarkChooseVFs: one vf-mode placement for an 8-GPU pod on the
// 8-PF node with 20 of its VFs held.
func BenchmarkChooseVFs(b *testing.B) {
	root := b.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x8-sriov", fakesys.Options{}); err != nil {
		b.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		b.Fatal(err)
	}
	n := &Node{Machine: m}
	use := NewUsage()
	held := 0
	for _, pf := range m.PFs {
		port, _ := m.PFNIC(pf)
		for _, vf := range pf.VFs {
			if held < 20 && vf.Attachable() == "" {
				use.AddVF(port.Name, vf.PCI, vf.PCI, "s", "ns/p")
				held++
			}
		}
	}
	in := Input{GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Mode: api.ModeVF}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.ChooseVFs(in, use); err != nil {
			b.Fatal(err)
		}
	}
}
