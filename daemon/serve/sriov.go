package serve

import (
	"log/slog"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/sriov"
)

// enableVFs applies the config's sriov.createVFs once, at start, before
// anything is placed: PFs it names that have no VFs get them (written
// below the root, as every sysfs path is), and the node is read again.
// The VFs' netdevs and RDMA devices register over the next seconds; the
// inventory follows their link events. Nothing configured: nothing done.
func enableVFs(inv *inventory.Inventory, cfg *config.Config, log *slog.Logger) {
	if len(cfg.SRIOV.CreateVFs) == 0 {
		return
	}
	created := false
	for _, o := range sriov.Enable(cfg.Root, inv.Machine(), cfg.SRIOV) {
		switch {
		case o.Err != nil:
			log.Warn("VFs not enabled", "pf", o.PF, "error", o.Err)
		case o.Created > 0:
			created = true
			log.Info("VFs enabled", "pf", o.PF, "vfs", o.Created)
		default:
			log.Info("VFs left as they are", "pf", o.PF, "why", o.Why)
		}
	}
	if !created {
		return
	}
	if _, err := inv.Rescan("VFs enabled"); err != nil {
		log.Warn("node rescan failed; the last snapshot stays", "error", err)
	}
}
