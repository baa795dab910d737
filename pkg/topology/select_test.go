package topology_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// choiceText renders choices as "0:mlx5_0:PIX 1:mlx5_1:PHB".
func choiceText(choices []topology.Choice) string {
	parts := make([]string, len(choices))
	for i, c := range choices {
		parts[i] = strconv.Itoa(c.GPU) + ":" + c.NIC + ":" + c.Class.String()
	}
	return strings.Join(parts, " ")
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name    string
		machine string
		req     topology.Request
		want    string // choiceText
		wantErr string // exact error text
	}{
		{name: "pix pair", machine: "h100x8-cx7x4", req: topology.Request{GPUs: []int{0, 1}},
			want: "0:mlx5_0:PIX 1:mlx5_0:PIX"},
		{name: "request order kept", machine: "h100x8-cx7x4", req: topology.Request{GPUs: []int{6, 0}},
			want: "6:mlx5_3:PIX 0:mlx5_0:PIX"},
		{name: "duplicates once", machine: "h100x8-cx7x4", req: topology.Request{GPUs: []int{2, 2, 3}},
			want: "2:mlx5_1:PIX 3:mlx5_1:PIX"},
		{name: "excluded falls back to next class", machine: "h100x8-cx7x4",
			req:  topology.Request{GPUs: []int{0}, Exclude: map[string]string{"mlx5_0": "owned by pod ns/x"}},
			want: "0:mlx5_1:PHB"},
		{name: "selector by name", machine: "h100x8-cx7x4", req: topology.Request{GPUs: []int{0}, NICs: []string{"mlx5_2", "mlx5_3"}},
			want: "0:mlx5_2:SYS"},
		{name: "selector by pci", machine: "h100x8-cx7x4", req: topology.Request{GPUs: []int{0}, NICs: []string{"0000:a0:00.0"}},
			want: "0:mlx5_3:SYS"},
		{name: "selector by short pci", machine: "h100x8-cx7x4", req: topology.Request{GPUs: []int{4}, NICs: []string{"A0:00.0"}},
			want: "4:mlx5_3:PHB"},
		{name: "selector by netdev", machine: "h100x8-cx7x4", req: topology.Request{GPUs: []int{4}, NICs: []string{"ibp30s0"}},
			want: "4:mlx5_1:SYS"},
		{name: "tie spreads one to one by name", machine: "twolevel-2s", req: topology.Request{GPUs: []int{2, 3}},
			want: "2:mlx5_0:PXB 3:mlx5_1:PXB"},
		{name: "tie spreads in PCI order, not request order", machine: "twolevel-2s", req: topology.Request{GPUs: []int{3, 2}},
			want: "3:mlx5_1:PXB 2:mlx5_0:PXB"},
		{name: "tie counts request load", machine: "twolevel-2s",
			req:  topology.Request{GPUs: []int{2, 3}, Load: map[string]int{"mlx5_0": 1}},
			want: "2:mlx5_1:PXB 3:mlx5_0:PXB"},
		{name: "tie counts load over assignments", machine: "twolevel-2s",
			req:  topology.Request{GPUs: []int{2, 3}, Load: map[string]int{"mlx5_0": 5}},
			want: "2:mlx5_1:PXB 3:mlx5_1:PXB"},
		{name: "single-choice GPUs go first", machine: "twolevel-2s", req: topology.Request{GPUs: []int{2, 0}},
			want: "2:mlx5_1:PXB 0:mlx5_0:PIX"},
		{name: "load never beats a closer class", machine: "h100x8-cx7x4",
			req:  topology.Request{GPUs: []int{0}, Load: map[string]int{"mlx5_0": 100}},
			want: "0:mlx5_0:PIX"},
		{name: "link layer infiniband skips bond", machine: "down-bond",
			req:  topology.Request{GPUs: []int{2, 3}, LinkLayer: "InfiniBand"},
			want: "2:mlx5_0:PHB 3:mlx5_0:PHB"},
		{name: "link layer ethernet", machine: "down-bond", req: topology.Request{GPUs: []int{0}, LinkLayer: "ethernet"},
			want: "0:mlx5_bond_0:PHB"},
		{name: "no usable NIC says why", machine: "down-bond",
			req:     topology.Request{GPUs: []int{3}, LinkLayer: "InfiniBand", Exclude: map[string]string{"mlx5_0": "owned by pod ns/x"}},
			wantErr: "gpu 3: no usable NIC: mlx5_0 owned by pod ns/x, mlx5_1 port DOWN, mlx5_bond_0 link layer Ethernet (want InfiniBand)"},
		{name: "several GPUs without NIC", machine: "down-bond",
			req:     topology.Request{GPUs: []int{0, 1}, NICs: []string{"mlx5_1"}},
			wantErr: "gpus 0, 1: no usable NIC: mlx5_0 not selected (want mlx5_1), mlx5_1 port DOWN, mlx5_bond_0 not selected (want mlx5_1)"},
		{name: "unknown GPU", machine: "h100x8-cx7x4", req: topology.Request{GPUs: []int{0, 8}},
			wantErr: "gpu 8: no such GPU (this node has GPUs 0-7)"},
		{name: "negative GPU", machine: "lab-1x1", req: topology.Request{GPUs: []int{-1}},
			wantErr: "gpu -1: no such GPU (this node has GPU 0)"},
		{name: "no GPUs: lowest load", machine: "h100x8-cx7x4",
			req:  topology.Request{Load: map[string]int{"mlx5_0": 2, "mlx5_1": 1, "mlx5_2": 1, "mlx5_3": 3}},
			want: "-1:mlx5_1:SYS"},
		{name: "no GPUs: selector and name", machine: "gpu8-nic8", req: topology.Request{NICs: []string{"mlx5_9", "mlx5_10", "mlx5_bond_0"}},
			want: "-1:mlx5_9:SYS"},
		{name: "no GPUs: natural name order", machine: "gpu8-nic8",
			req:  topology.Request{Exclude: map[string]string{"mlx5_0": "", "mlx5_1": ""}},
			want: "-1:mlx5_2:SYS"},
		{name: "no GPUs: nothing usable", machine: "down-bond", req: topology.Request{LinkLayer: "InfiniBand", Exclude: map[string]string{"mlx5_0": ""}},
			wantErr: "no usable NIC: mlx5_0 excluded, mlx5_1 port DOWN, mlx5_bond_0 link layer Ethernet (want InfiniBand)"},
		{name: "software RoCE", machine: "softroce", req: topology.Request{GPUs: []int{0}, LinkLayer: "Ethernet"},
			want: "0:rxe0:SYS"},
	}
	machines := map[string]*topology.Machine{}
	for _, tc := range tests {
		if machines[tc.machine] == nil {
			root, _ := writeMachine(t, tc.machine, fakesys.Options{})
			machines[tc.machine] = discover(t, root)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := machines[tc.machine].Select(tc.req)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v\nwant    %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if text := choiceText(got); text != tc.want {
				t.Errorf("choices = %s, want %s", text, tc.want)
			}
		})
	}
}

func TestSelectReason(t *testing.T) {
	root, _ := writeMachine(t, "twolevel-2s", fakesys.Options{})
	m := discover(t, root)
	tests := []struct {
		gpus []int
		want []string
	}{
		{[]int{0}, []string{"PIX to GPU0 via switch 0000:18:00.0"}},
		{[]int{2, 3}, []string{
			"PXB to GPU2 via switch 0000:16:00.0; least loaded of 2 equally close NICs",
			"PXB to GPU3 via switch 0000:16:00.0; least loaded of 2 equally close NICs",
		}},
		{[]int{6}, []string{"PHB to GPU6 via host bridge pci0000:97; least loaded of 2 equally close NICs"}},
	}
	for _, tc := range tests {
		got, err := m.Select(topology.Request{GPUs: tc.gpus})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range got {
			if c.Reason != tc.want[i] {
				t.Errorf("GPU%d reason %q, want %q", c.GPU, c.Reason, tc.want[i])
			}
		}
	}
	got, err := m.Select(topology.Request{GPUs: []int{0}, NICs: []string{"mlx5_2"}})
	if err != nil || got[0].Reason != "SYS to GPU0: across NUMA nodes 0 and 1" {
		t.Errorf("cross-socket reason = %v %v", got, err)
	}
}

func TestUsable(t *testing.T) {
	root, _ := writeMachine(t, "down-bond", fakesys.Options{})
	m := discover(t, root)
	tests := []struct {
		nic    string
		req    topology.Request
		ok     bool
		reason string
	}{
		{"mlx5_0", topology.Request{}, true, ""},
		{"mlx5_1", topology.Request{}, false, "port DOWN"},
		{"mlx5_bond_0", topology.Request{LinkLayer: "InfiniBand"}, false, "link layer Ethernet (want InfiniBand)"},
		{"mlx5_0", topology.Request{Exclude: map[string]string{"mlx5_0": "owned by pod ns/a"}}, false, "owned by pod ns/a"},
		{"mlx5_0", topology.Request{NICs: []string{"mlx5_bond_0"}}, false, "not selected (want mlx5_bond_0)"},
		{"mlx5_0", topology.Request{NICs: []string{"0000:19:00.0"}}, true, ""},
	}
	for _, tc := range tests {
		n, ok := m.NICByName(tc.nic)
		if !ok {
			t.Fatalf("no %s", tc.nic)
		}
		gotOK, reason := m.Usable(n, tc.req)
		if gotOK != tc.ok || reason != tc.reason {
			t.Errorf("Usable(%s, %+v) = %v %q, want %v %q", tc.nic, tc.req, gotOK, reason, tc.ok, tc.reason)
		}
	}
}

// TestSelectHandBuilt covers a Machine assembled with NewMachine and one
// built as a literal (no index): a lower-numbered GPU that could use two
// NICs must not take the only NIC of a later GPU.
func TestSelectHandBuilt(t *testing.T) {
	gpus := []topology.GPU{
		{Index: 0, PCI: "0000:10:00.0", Root: "pci0000:00", Path: []string{"0000:00:01.0"}, NUMA: 0},
		{Index: 1, PCI: "0000:20:00.0", Root: "pci0000:00", Path: []string{"0000:00:02.0", "0000:1e:00.0", "0000:1f:00.0"}, NUMA: 0},
	}
	nic := func(name, pci string, path ...string) topology.NIC {
		return topology.NIC{Name: name, PCI: pci, Root: "pci0000:00", Path: path, NUMA: 0,
			State: "ACTIVE", LinkLayer: "InfiniBand", Netdev: "ib-" + name}
	}
	nics := []topology.NIC{
		nic("a", "0000:21:00.0", "0000:00:02.0", "0000:1e:00.0", "0000:1f:01.0"),
		nic("b", "0000:30:00.0", "0000:00:03.0"),
	}
	for _, m := range []*topology.Machine{{GPUs: gpus, NICs: nics}} {
		got, err := m.Select(topology.Request{GPUs: []int{0, 1}})
		if err != nil {
			t.Fatal(err)
		}
		if text := choiceText(got); text != "0:b:PHB 1:a:PIX" {
			t.Errorf("choices %s, want 0:b:PHB 1:a:PIX", text)
		}
	}
}

// TestSelectConcurrent: one discovered Machine serves many callers.
func TestSelectConcurrent(t *testing.T) {
	root, _ := writeMachine(t, "gpu8-nic8", fakesys.Options{})
	m := discover(t, root)
	want, err := m.Select(topology.Request{GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			for range 50 {
				got, err := m.Select(topology.Request{GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
				if err != nil || choiceText(got) != choiceText(want) {
					errs <- choiceText(got)
					return
				}
				_ = m.Report()
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Errorf("concurrent Select = %s, want %s", e, choiceText(want))
		}
	}
}
