package topology_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestWriteTextPFs: `raild topo` lists each PF with its VFs, each free,
// held by its pods (in vf mode by PCI address, moved by its RDMA device)
// or why it cannot be attached; the JSON carries the PFs.
func TestWriteTextPFs(t *testing.T) {
	root, spec := writeMachine(t, "h100x8-cx7x8-sriov", fakesys.Options{})
	report := discover(t, root).Report()
	pf0, pf6, pf7 := spec.PFs[0], spec.PFs[6], spec.PFs[7]
	report.Holders = map[string]string{pf0.VFs[0].PCI: "ns/a", pf0.VFs[1].RDMA: "ns/b"}
	var out bytes.Buffer
	if err := topology.WriteText(&out, report); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		`SR-IOV PFs:`,
		pf0.PCI + ` +mlx5_0 +` + pf0.Netdev + ` +VFs 4 of 4 +mlx5_core`,
		`vf0 +` + pf0.VFs[0].PCI + ` +` + pf0.VFs[0].Netdev + ` +` + pf0.VFs[0].RDMA + ` +mlx5_core +held by ns/a`,
		`vf1 +` + pf0.VFs[1].PCI + ` .* held by ns/b`,
		`vf2 +` + pf0.VFs[2].PCI + ` .* free`,
		`vf3 +` + pf6.VFs[3].PCI + ` +- +- +vfio-pci +bound to vfio-pci`,
		pf7.PCI + ` +mlx5_7 +` + pf7.Netdev + ` +VFs 0 of 4`,
	} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	raw, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	var back topology.Report
	if err := json.Unmarshal(raw, &back); err != nil || len(back.PFs) != 8 || len(back.PFs[0].VFs) != 4 || back.PFs[0].VFs[0].RDMA == "" {
		t.Fatalf("JSON PFs %+v (%v)", back.PFs, err)
	}
	bareRoot, _ := writeMachine(t, "gpu8-nic8", fakesys.Options{})
	if bare, err := json.Marshal(discover(t, bareRoot).Report()); err != nil || strings.Contains(string(bare), `"pfs"`) {
		t.Errorf("a node without SR-IOV reports pfs (%v)", err)
	}
}
