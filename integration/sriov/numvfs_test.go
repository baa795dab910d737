package sriov

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// numVFs is the number of VFs the PF netdev pf has now (sriov_numvfs).
func numVFs(t *testing.T, pf string) int {
	t.Helper()
	b, err := os.ReadFile("/sys/class/net/" + pf + "/device/sriov_numvfs")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s sriov_numvfs: %v", pf, err)
	}
	return n
}

// setNumVFs gives the PF at pci n VFs (as an admin or operator would: 0
// first, as the kernel requires) and waits for their netdevs; the cleanup
// gives it back vfsPerPF. Call it while no raild runs, or one that follows
// VFs coming and going.
func setNumVFs(t *testing.T, pci string, n int) {
	t.Helper()
	set := func(n int) error {
		f := filepath.Join("/sys/bus/pci/devices", pci, "sriov_numvfs")
		for _, v := range []int{0, n} {
			if err := os.WriteFile(f, []byte(strconv.Itoa(v)), 0o644); err != nil {
				return fmt.Errorf("%s: write %d: %w", f, v, err)
			}
		}
		for vf := range n {
			if _, err := waitVFNetdev(pci, vf); err != nil {
				return err
			}
		}
		return nil
	}
	t.Cleanup(func() {
		if err := set(vfsPerPF); err != nil {
			t.Error(err)
		}
	})
	if err := set(n); err != nil {
		t.Fatal(err)
	}
}

// vfPF is the PCI address of the PF of the VF at pci.
func vfPF(t *testing.T, pci string) string {
	t.Helper()
	pf, err := filepath.EvalSymlinks(filepath.Join("/sys/bus/pci/devices", pci, "physfn"))
	if err != nil {
		t.Fatalf("VF %s has no PF: %v", pci, err)
	}
	return filepath.Base(pf)
}
