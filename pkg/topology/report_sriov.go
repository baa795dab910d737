package topology

import (
	"fmt"
	"io"
)

// writePFs lists each SR-IOV PF (its NIC, VFs enabled of total) and each
// of its VFs: netdev, RDMA device, driver, and free or the pods holding it
// (in vf mode by its PCI address, in another mode by its RDMA device).
func writePFs(tw io.Writer, r Report) {
	if len(r.PFs) == 0 {
		return
	}
	nics := &Machine{NICs: r.NICs}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "SR-IOV PFs:")
	for _, pf := range r.PFs {
		nic := "-"
		if n, ok := nics.PFNIC(pf); ok {
			nic = n.Name
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\tVFs %d of %d\t%s\n", pf.PCI, nic, dash(pf.Netdev), pf.NumVFs, pf.TotalVFs, dash(pf.Driver))
		for _, vf := range pf.VFs {
			fmt.Fprintf(tw, "    vf%d\t%s\t%s\t%s\t%s\t%s\n", vf.Index, vf.PCI, dash(vf.Netdev), dash(vf.RDMA), dash(vf.Driver), vfUse(vf, r.Holders))
		}
	}
}

// vfUse is "held by <pods>", "free", or why the VF cannot be attached.
func vfUse(vf VF, holders map[string]string) string {
	if pods, ok := vf.HeldBy(holders); ok {
		return "held by " + pods
	}
	if why := vf.Attachable(); why != "" {
		return why
	}
	return "free"
}
