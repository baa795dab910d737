package topology_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestReportJSON(t *testing.T) {
	root, spec := writeMachine(t, "down-bond", fakesys.Options{})
	m := discover(t, root)
	b, err := json.Marshal(m.Report())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"gpus", "nics", "matrix", "affinity", "problems", "rdmaCM"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("report has no %q: %s", key, b)
		}
	}
	gpu0 := doc["gpus"].([]any)[0].(map[string]any)
	wantGPU := map[string]any{"index": 0.0, "pci": "0000:18:00.0", "uuid": spec.GPUs[0].UUID, "numa": 0.0, "minor": 0.0, "root": "pci0000:15"}
	for k, v := range wantGPU {
		if gpu0[k] != v {
			t.Errorf("gpus[0].%s = %v, want %v", k, gpu0[k], v)
		}
	}
	nics := doc["nics"].([]any)
	wantNICs := []map[string]any{
		{"name": "mlx5_0", "pci": "0000:19:00.0", "netdev": "ibp25s0", "state": "ACTIVE", "linkLayer": "InfiniBand", "numa": 0.0, "uverbs": "uverbs0"},
		{"name": "mlx5_1", "pci": "0000:1e:00.0", "netdev": "ibp30s0", "state": "DOWN", "linkLayer": "InfiniBand", "numa": 0.0, "uverbs": "uverbs1"},
		{"name": "mlx5_bond_0", "pci": "0000:20:00.0", "netdev": "bond0", "state": "ACTIVE", "linkLayer": "Ethernet", "numa": 0.0, "uverbs": "uverbs2", "bond": true},
	}
	if len(nics) != len(wantNICs) {
		t.Fatalf("%d nics, want %d", len(nics), len(wantNICs))
	}
	for i, want := range wantNICs {
		got := nics[i].(map[string]any)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("nics[%d].%s = %v, want %v", i, k, got[k], v)
			}
		}
		dev := got["uverbsDev"].(map[string]any)
		if dev["path"] != "/dev/infiniband/"+want["uverbs"].(string) || dev["major"] != 231.0 {
			t.Errorf("nics[%d].uverbsDev = %v", i, dev)
		}
	}
	matrix := doc["matrix"].(map[string]any)
	wantMatrix := map[string]map[string]string{
		"0": {"mlx5_0": "PIX", "mlx5_1": "PHB", "mlx5_bond_0": "PHB"},
		"3": {"mlx5_0": "PHB", "mlx5_1": "PIX", "mlx5_bond_0": "PHB"},
	}
	for gpu, row := range wantMatrix {
		for nic, class := range row {
			if got := matrix[gpu].(map[string]any)[nic]; got != class {
				t.Errorf("matrix[%s][%s] = %v, want %s", gpu, nic, got, class)
			}
		}
	}
	if len(matrix) != 4 {
		t.Errorf("matrix has %d GPUs, want 4", len(matrix))
	}
	aff := doc["affinity"].(map[string]any)
	wantAff := map[string]any{"0": "mlx5_0", "1": "mlx5_0", "2": "mlx5_bond_0", "3": "mlx5_bond_0"}
	if len(aff) != len(wantAff) {
		t.Errorf("affinity %v, want %v", aff, wantAff)
	}
	for k, v := range wantAff {
		if aff[k] != v {
			t.Errorf("affinity[%s] = %v, want %v", k, aff[k], v)
		}
	}
	var back topology.Report
	if err := json.Unmarshal(b, &back); err != nil || back.Matrix["0"]["mlx5_0"] != topology.PIX {
		t.Errorf("report does not read back: %v %v", err, back.Matrix)
	}
}

func TestReportEmptyNode(t *testing.T) {
	b, err := json.Marshal((&topology.Machine{}).Report())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"gpus":[],"nics":[],"matrix":{},"affinity":{}}` {
		t.Errorf("empty report = %s", b)
	}
}

func TestWriteText(t *testing.T) {
	root, _ := writeMachine(t, "down-bond", fakesys.Options{})
	m := discover(t, root)
	var out bytes.Buffer
	if err := topology.WriteText(&out, m.Report()); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	wantLines := []string{
		"      mlx5_0  mlx5_1  mlx5_bond_0  NUMA  PCI",
		"GPU0  PIX     PHB     PHB          0     0000:18:00.0",
		"GPU3  PHB     PIX     PHB          0     0000:1f:00.0",
		"  PXB   = crosses several PCIe switches, never the host bridge",
		"NIC          NETDEV   PORT  STATE   LINK        RATE                 NUMA  PCI           UVERBS   UMAD",
		"mlx5_0       ibp25s0  1     ACTIVE  InfiniBand  400 Gb/sec (4X NDR)  0     0000:19:00.0  uverbs0  umad0",
		"mlx5_1       ibp30s0  1     DOWN    InfiniBand  400 Gb/sec (4X NDR)  0     0000:1e:00.0  uverbs1  umad1",
		"mlx5_bond_0  bond0    1     ACTIVE  Ethernet    200 Gb/sec (4X HDR)  0     0000:20:00.0  uverbs2  umad2",
		"  GPU2  -> mlx5_bond_0  PHB",
		"  mlx5_1:  port 1 DOWN (Disabled)",
	}
	lines := strings.Split(text, "\n")
	for _, want := range wantLines {
		found := false
		for _, l := range lines {
			if strings.TrimRight(l, " ") == want {
				found = true
			}
		}
		if !found {
			t.Errorf("text lacks line %q:\n%s", want, text)
		}
	}
}

// TestReportDualPort: each port of a dual-port HCA is a column of the
// matrix, a row of the NIC table with its own netdev and umad, an affinity
// target and a JSON entry naming its device and port.
func TestReportDualPort(t *testing.T) {
	root, _ := writeMachine(t, "dualport-2s", fakesys.Options{})
	report := discover(t, root).Report()
	var out bytes.Buffer
	if err := topology.WriteText(&out, report); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"      mlx4_0  mlx4_0:2  mlx4_1  mlx4_1:2  mlx5_0  NUMA  PCI",
		"GPU1  PIX     PIX       PHB     PHB       SYS     0     0000:19:00.0",
		"mlx4_0    ibp26s0    1     ACTIVE  InfiniBand  400 Gb/sec (4X NDR)  0     0000:1a:00.0  uverbs0  umad0",
		"mlx4_0:2  ibp26s0d1  2     ACTIVE  InfiniBand  400 Gb/sec (4X NDR)  0     0000:1a:00.0  uverbs0  umad1",
		"mlx4_1:2  ens2d1     2     ACTIVE  Ethernet    200 Gb/sec (4X HDR)  0     0000:1f:00.0  uverbs1  umad3",
		"  GPU1  -> mlx4_0:2  PIX",
		"  GPU3  -> mlx4_1:2  PIX",
	} {
		if !slices.ContainsFunc(strings.Split(text, "\n"), func(l string) bool { return strings.TrimRight(l, " ") == want }) {
			t.Errorf("text lacks line %q:\n%s", want, text)
		}
	}
	b, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		NICs []struct {
			Name, Device      string
			Port, DevicePorts int
			Netdev            string
		}
		Affinity map[string]string
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	wantNICs := []string{"mlx4_0 mlx4_0 1 2 ibp26s0", "mlx4_0:2 mlx4_0 2 2 ibp26s0d1", "mlx4_1 mlx4_1 1 2 ens2",
		"mlx4_1:2 mlx4_1 2 2 ens2d1", "mlx5_0 mlx5_0 1 0 ibp155s0"}
	if len(doc.NICs) != len(wantNICs) {
		t.Fatalf("%d nics in JSON, want %d", len(doc.NICs), len(wantNICs))
	}
	for i, n := range doc.NICs {
		got := fmt.Sprintf("%s %s %d %d %s", n.Name, n.Device, n.Port, n.DevicePorts, n.Netdev)
		if got != wantNICs[i] {
			t.Errorf("nics[%d] = %q, want %q", i, got, wantNICs[i])
		}
	}
	if doc.Affinity["1"] != "mlx4_0:2" {
		t.Errorf("JSON affinity %v, want GPU1 on mlx4_0:2", doc.Affinity)
	}
}

func TestWriteTextHolders(t *testing.T) {
	root, _ := writeMachine(t, "down-bond", fakesys.Options{})
	report := discover(t, root).Report()
	tests := []struct {
		name    string
		holders map[string]string
		want    string // a line, or "" for no section
	}{
		{"none", nil, ""},
		{"one NIC in a pod", map[string]string{"mlx5_0": "ns/a"}, "  mlx5_0:  ns/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report.Holders = tt.holders
			var out bytes.Buffer
			if err := topology.WriteText(&out, report); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			if has := strings.Contains(text, "Held by pods:"); has != (tt.want != "") {
				t.Fatalf("section shown = %v, want %v:\n%s", has, tt.want != "", text)
			}
			if tt.want != "" && !strings.Contains(text, tt.want+"\n") {
				t.Errorf("text lacks %q:\n%s", tt.want, text)
			}
		})
	}
}
