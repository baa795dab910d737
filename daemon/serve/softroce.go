package serve

import (
	"errors"
	"log/slog"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// softRoCENICs makes the inventory place the node's Ethernet NICs without
// an RDMA device, by their netdevs, on a softRoCE node whose node class
// turned softRoCE on (the top-level setting did it at New); the machine is
// read again. Other nodes change nothing.
func softRoCENICs(inv *inventory.Inventory, cfg *config.Config, discover func(netdevNICs bool) inventory.Discoverer, log *slog.Logger) error {
	if cfg.SoftRoCE == inv.Machine().NetdevNICs {
		return nil
	}
	snap, err := inv.Rediscover("softRoCE (node class)", discover(cfg.SoftRoCE))
	if err != nil {
		return err
	}
	log.Info("NICs read again for the node class's softRoCE setting", "softRoCE", cfg.SoftRoCE, "nics", len(snap.Machine.NICs))
	return nil
}

// checkSoftRoCE refuses to start a softRoCE node whose kernel cannot give
// pods a working rxe (rdma.CheckSoftRoCE names the kernel and what it
// lacks), or where an RDMA device of the host's netns sits on a NIC's
// netdev (standInRefusal), so that no pod is ever half attached; other
// nodes check nothing.
func checkSoftRoCE(cfg *config.Config, mode rdma.NetnsMode, m *topology.Machine, log *slog.Logger) error {
	if !cfg.SoftRoCE {
		return nil
	}
	if err := rdma.CheckSoftRoCE(mode); err != nil {
		return err
	}
	if err := standInRefusal(m); err != nil {
		return err
	}
	log.Info("softRoCE mode: each pod interface gets an rxe of its own in the pod", "kernel", rdma.KernelRelease())
	return nil
}

// standInRefusal names every software RDMA device of the host's netns on
// a NIC's netdev (an rxe made at boot to stand in for the port, as
// softRoCE nodes once needed): each takes the rdma_cm of the pods on that
// NIC (topology.NIC.StandInProblem), so a softRoCE node does not start
// until they are deleted. nil when there is none.
func standInRefusal(m *topology.Machine) error {
	var errs []error
	for _, n := range m.SoftRDMANICs() {
		errs = append(errs, errors.New("softRoCE: "+n.StandInProblem()))
	}
	return errors.Join(errs...)
}

// sweepSoftRoCE deletes, at start, the pods' rxe devices no lease explains
// (service.StaleSoftRoCE): what a crash between a pod's DEL and its
// release left. It runs on every node, since a node taken out of softRoCE
// mode may still hold them; a kernel without RDMA has none.
func sweepSoftRoCE(svc *service.Service, log *slog.Logger) {
	devices, err := rdma.PodSoftRoCEDevices("")
	if err != nil {
		if rdma.IsNoRDMA(err) {
			return
		}
		log.Warn("cannot list the pods' soft-RoCE devices: not swept", "error", err)
		return
	}
	for _, name := range svc.StaleSoftRoCE(devices) {
		if err := rdma.DeleteSoftRoCE("", name); err != nil {
			log.Warn("stale soft-RoCE device not deleted", "device", name, "error", err)
			continue
		}
		log.Info("deleted a soft-RoCE device no lease holds", "device", name)
	}
}
