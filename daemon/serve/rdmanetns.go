package serve

import (
	"log/slog"

	"github.com/railcni/rail/pkg/rdma"
)

// rdmaNetnsMode reads the kernel's RDMA netns mode: in exclusive mode each
// RDMA device sits in one netns, and moving a port's netdev moves the
// whole device. The mode can only change while no netns but the host's
// exists, so it is read once. A kernel without RDMA, or a read that fails,
// counts as shared (the failure is logged): placement then treats ports
// independently.
func rdmaNetnsMode(log *slog.Logger) rdma.NetnsMode {
	mode, err := rdma.SystemNetnsMode()
	if err != nil {
		log.Warn("cannot read the RDMA netns mode: ports of one RDMA device are placed independently", "error", err)
		return rdma.NetnsShared
	}
	log.Info("RDMA netns mode", "mode", mode)
	return mode
}
