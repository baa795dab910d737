package inspect

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// softRoCEMachines are the built-in machines without RDMA devices, read as
// `raild topo --soft-roce` reads them, with how many NICs they show so.
var softRoCEMachines = map[string]int{"softroce-vm": 3}

// TestTopoJSONShape checks `raild topo --root DIR --json` on every built-in
// machine (--soft-roce on those without RDMA devices).
func TestTopoJSONShape(t *testing.T) {
	for _, name := range fakesys.Names() {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			spec, err := fakesys.Write(root, name, fakesys.Options{})
			if err != nil {
				t.Fatal(err)
			}
			netdevNICs, softRoCE := softRoCEMachines[name]
			report, err := topoReport(root, filepath.Join(root, "no.sock"), "", topology.Options{NetdevNICs: softRoCE})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := printJSON(&buf, report); err != nil {
				t.Fatal(err)
			}
			var got struct {
				GPUs     []map[string]any             `json:"gpus"`
				NICs     []map[string]any             `json:"nics"`
				Matrix   map[string]map[string]string `json:"matrix"`
				Affinity map[string]string            `json:"affinity"`
			}
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			nics := len(spec.Targets()) + netdevNICs
			if len(got.GPUs) != len(spec.GPUs) || len(got.NICs) != nics || len(got.Matrix) != len(spec.GPUs) {
				t.Fatalf("gpus %d nics %d matrix %d; want %d, %d, %d", len(got.GPUs), len(got.NICs), len(got.Matrix),
					len(spec.GPUs), nics, len(spec.GPUs))
			}
			for _, key := range []string{"index", "pci", "numa"} {
				if len(got.GPUs) > 0 {
					if _, ok := got.GPUs[0][key]; !ok {
						t.Errorf("gpu object lacks %q: %v", key, got.GPUs[0])
					}
				}
			}
			keys := []string{"name", "netdev", "state", "linkLayer", "numa", "uverbs"}
			if softRoCE {
				keys = []string{"name", "netdev", "state", "linkLayer", "numa", "pci", "netdevOnly"} // no RDMA device, no uverbs
			}
			for _, key := range keys {
				if _, ok := got.NICs[0][key]; !ok {
					t.Errorf("nic object lacks %q: %v", key, got.NICs[0])
				}
			}
			var text bytes.Buffer
			if err := topology.WriteText(&text, report); err != nil || text.Len() == 0 {
				t.Fatalf("text report: %v, %d bytes", err, text.Len())
			}
		})
	}
}
