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

// ownedPFs is the config's sriov.ownPFs, for the sweep; a name that is no
// SR-IOV PF of the node now is logged once here (the sweep resolves the
// names again each time: a PF whose VFs come later is owned then).
func ownedPFs(inv *inventory.Inventory, cfg *config.Config, log *slog.Logger) []string {
	if len(cfg.SRIOV.OwnPFs) == 0 {
		return nil
	}
	owned, unknown := cfg.SRIOV.Owned(inv.Machine())
	for _, name := range unknown {
		log.Warn("sriov.ownPFs names no SR-IOV PF of this node (yet)", "pf", name)
	}
	log.Info("VFs with an admin MAC no lease holds are reset on the PFs raild owns", "pfs", cfg.SRIOV.OwnPFs, "found", len(owned))
	return cfg.SRIOV.OwnPFs
}
