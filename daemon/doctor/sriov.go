package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// livePools is raild's pools with their NIC bindings (none without an
// answer: socketCheck says why).
func livePools(socket string) []api.PoolStatus {
	st, err := api.NewClient(socket, 5*time.Second).Status(context.Background(), "")
	if err != nil {
		return nil
	}
	return st.Pools
}

// sriovChecks reports each SR-IOV PF: its VFs enabled, free and held
// (holders from raild, nil without it), and warns about a PF with no VF
// enabled that a pool's NIC binding selects (vf mode can never place a
// pod of that pool there).
func sriovChecks(m *topology.Machine, pools []api.PoolStatus, holders map[string]string) []check {
	var out []check
	for _, pf := range m.PFs {
		nic, hasNIC := m.PFNIC(pf)
		name := pf.PCI
		if hasNIC {
			name += " (" + nic.Name + ")"
		}
		if pf.NumVFs == 0 {
			selecting := poolsSelecting(pools, pf, nic)
			if len(selecting) > 0 {
				out = append(out, check{"warn", fmt.Sprintf("SR-IOV PF %s has no VFs (sriov_numvfs 0 of %d) but pool(s) %s select it",
					name, pf.TotalVFs, strings.Join(selecting, ", ")),
					fmt.Sprintf("enable VFs (echo N > /sys/bus/pci/devices/%s/sriov_numvfs, the SR-IOV operator, or raild's sriov config) or drop the PF from the pool", pf.PCI)})
				continue
			}
			out = append(out, check{"ok", fmt.Sprintf("SR-IOV PF %s has no VFs (sriov_numvfs 0 of %d); no pool selects it", name, pf.TotalVFs), ""})
			continue
		}
		free, held, other := 0, 0, 0
		for _, vf := range pf.VFs {
			_, isHeld := vf.HeldBy(holders)
			switch {
			case isHeld:
				held++
			case vf.Attachable() == "":
				free++
			default:
				other++
			}
		}
		what := fmt.Sprintf("SR-IOV PF %s: %d of %d VFs enabled, %d free, %d held by pods", name, pf.NumVFs, pf.TotalVFs, free, held)
		if other > 0 {
			what += fmt.Sprintf(", %d not attachable (vfio-pci, unbound, or a netdev away from the host)", other)
		}
		if !hasNIC {
			what += "; no RDMA device places it (vf mode needs the PF's own, or an rxe on its netdev)"
		}
		out = append(out, check{"ok", what, ""})
	}
	return out
}

// poolsSelecting names the pools whose NIC binding names the PF: its
// NIC, PCI address or netdev.
func poolsSelecting(pools []api.PoolStatus, pf topology.PF, nic topology.NIC) []string {
	var out []string
	for _, p := range pools {
		for _, b := range p.Bound {
			if (nic.Name != "" && b == nic.Name) || topology.NormalizePCI(b) == pf.PCI || (pf.Netdev != "" && b == pf.Netdev) {
				out = append(out, p.Name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// leakedVFChecks warns about each VF raild's last sweep found carrying a
// pod's admin MAC that no lease owns (or sharing an admin MAC).
func leakedVFChecks(leaked []topology.LeakedVF) []check {
	out := make([]check, 0, len(leaked))
	for _, v := range leaked {
		out = append(out, check{"warn", fmt.Sprintf("VF %d of %s (%s) leaked: %s", v.Index, v.PF, v.PCI, v.Why),
			fmt.Sprintf("a pod's settings are still on it: reset it (ip link set %s vf %d mac 00:00:00:00:00:00, and its vlan, trust, spoofchk) "+
				"or let its pod's DEL run; raild resets a VF that comes back from a dead pod on its own, and on the PFs "+
				"its config's sriov.ownPFs names (only rail hands out their VFs) any VF with an admin MAC no lease holds", v.PF, v.Index)})
	}
	return out
}
