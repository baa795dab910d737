package serve

import (
	"log/slog"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/pkg/rdma"
)

// checkSoftRoCE refuses to start a softRoCE node whose kernel cannot give
// pods a working rxe (rdma.CheckSoftRoCE names the kernel and what it
// lacks), so that no pod is ever half attached; other nodes check nothing.
func checkSoftRoCE(cfg *config.Config, mode rdma.NetnsMode, log *slog.Logger) error {
	if !cfg.SoftRoCE {
		return nil
	}
	if err := rdma.CheckSoftRoCE(mode); err != nil {
		return err
	}
	log.Info("softRoCE mode: each pod interface gets an rxe of its own in the pod", "kernel", rdma.KernelRelease())
	return nil
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
