package sriov

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestEnable(t *testing.T) {
	tests := []struct {
		name    string
		rule    Rule
		pf      int    // the spec PF whose sriov_numvfs to read after
		want    string // its sriov_numvfs after
		outcome string // Created, Why or Err text
	}{
		{"a PF without VFs gets them", Rule{PFs: []string{"mlx5_7"}, NumVFs: 2}, 7, "2", "created 2"},
		{"named by PCI address", Rule{PFs: []string{"PCI7"}, NumVFs: 3}, 7, "3", "created 3"},
		{"named by netdev", Rule{PFs: []string{"NETDEV7"}, NumVFs: 4}, 7, "4", "created 4"},
		{"a PF with VFs is never changed", Rule{PFs: []string{"mlx5_0"}, NumVFs: 2}, 0, "4", "has 4 VFs already"},
		{"more than sriov_totalvfs", Rule{PFs: []string{"mlx5_7"}, NumVFs: 9}, 7, "0", "sriov.createVFs[0].numVFs 9: PF"},
		{"a VF's NIC is no PF", Rule{PFs: []string{"mlx5_8"}, NumVFs: 1}, 7, "0", `sriov.createVFs[0].pfs[0] "mlx5_8": no SR-IOV PF`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, spec, m := sriovMachine(t)
			pf := spec.PFs[tt.pf]
			for i, n := range tt.rule.PFs {
				tt.rule.PFs[i] = strings.NewReplacer("PCI7", spec.PFs[7].PCI, "NETDEV7", spec.PFs[7].Netdev).Replace(n)
			}
			outcomes := Enable(root, m, Config{CreateVFs: []Rule{tt.rule}})
			if len(outcomes) != 1 {
				t.Fatalf("outcomes %+v", outcomes)
			}
			o := outcomes[0]
			got := o.Why
			switch {
			case o.Err != nil:
				got = o.Err.Error()
			case o.Created > 0:
				got = fmt.Sprintf("created %d", o.Created)
			}
			if !strings.Contains(got, tt.outcome) {
				t.Errorf("outcome %q, want %q", got, tt.outcome)
			}
			raw, err := os.ReadFile(filepath.Join(root, "sys/bus/pci/devices", pf.PCI, "sriov_numvfs"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(raw)) != tt.want {
				t.Errorf("sriov_numvfs %q, want %s", raw, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		c    Config
		want string
	}{
		{Config{}, ""},
		{Config{CreateVFs: []Rule{{PFs: []string{"mlx5_0"}, NumVFs: 4}}}, ""},
		{Config{CreateVFs: []Rule{{NumVFs: 4}}}, "sriov.createVFs[0].pfs: empty"},
		{Config{CreateVFs: []Rule{{PFs: []string{""}, NumVFs: 4}}}, "sriov.createVFs[0].pfs[0]: empty"},
		{Config{CreateVFs: []Rule{{PFs: []string{"mlx5_0"}}}}, "sriov.createVFs[0].numVFs 0"},
		{Config{OwnPFs: []string{"mlx5_0", ""}}, "sriov.ownPFs[1]: empty"},
	} {
		err := tt.c.Validate()
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.c, err, tt.want)
		}
	}
}

// TestOwned: ownPFs name PFs by NIC, PCI address or netdev; a name that is
// no SR-IOV PF of the node is returned as unknown.
func TestOwned(t *testing.T) {
	_, spec, m := sriovMachine(t)
	owned, unknown := Config{OwnPFs: []string{"mlx5_0", spec.PFs[1].PCI, spec.PFs[2].Netdev, "mlx5_8", "ens99"}}.Owned(m)
	want := map[string]bool{spec.PFs[0].PCI: true, spec.PFs[1].PCI: true, spec.PFs[2].PCI: true}
	if !maps.Equal(owned, want) || !slices.Equal(unknown, []string{"mlx5_8", "ens99"}) {
		t.Fatalf("owned %v unknown %q, want %v and the VF's NIC and the typo", owned, unknown, want)
	}
}

// sriovMachine writes the 8-PF SR-IOV machine below a fresh root and reads it.
func sriovMachine(t *testing.T) (string, *fakesys.Spec, *topology.Machine) {
	t.Helper()
	root := t.TempDir()
	spec, err := fakesys.Write(root, "h100x8-cx7x8-sriov", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, spec, m
}
