package doctor

import (
	"fmt"
	"strings"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// gidDisagreement says, for a pod whose RoCE interfaces hold its addresses
// at different GID indices, that no index variable was set and what each
// engine then does (docs/environment.md, "When the NICs disagree"); ""
// when they agree or there is one.
func gidDisagreement(ifaces []api.PodInterface) string {
	var at []string
	seen := map[int]bool{}
	for _, i := range ifaces {
		if i.NIC == nil || i.NIC.LinkLayer != topology.Ethernet || i.GIDIndex == nil {
			continue
		}
		at = append(at, fmt.Sprintf("%s %d", i.Name, *i.GIDIndex))
		seen[*i.GIDIndex] = true
	}
	if len(seen) < 2 {
		return ""
	}
	return "GID index: the pod's RoCE interfaces hold its addresses at different indices (" + strings.Join(at, ", ") + "), " +
		"so raild set none of NCCL_IB_GID_INDEX, UCX_IB_GID_INDEX, MC_GID_INDEX (each takes one index for every device): " +
		"NCCL picks each device's GID itself (by NCCL_IB_ADDR_FAMILY / NCCL_IB_ADDR_RANGE when raild set them); " +
		"UCX's default (auto) picks each device's RoCE v2 GID itself; " +
		"Mooncake uses its one default index on every device and skips a device whose GID there is empty — " +
		"give those pods one subnet per index, or set MC_GID_INDEX per container (docs/environment.md)"
}
