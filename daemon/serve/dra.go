package serve

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/draslices"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/nri"
	"github.com/railcni/rail/daemon/service"
)

// startDRA lets the service (ADD) and NRI's gpuAutoInject resolve
// DRA-allocated GPUs: it starts the node's ResourceSlice informer when
// raild has an API connection (nil clients: DRA off, and a pod holding DRA
// GPUs fails ADD unless its netconf or pool says unresolvedGPUs: ignore).
// Call it before service.New and nri.New.
func startDRA(ctx context.Context, clients *kubeclient.Clients, cfg *config.Config, opt *service.Options, kubelet *nri.Kubelet, log *slog.Logger) error {
	opt.GPUDRADrivers, kubelet.GPUDRADrivers = cfg.GPUDRADrivers, cfg.GPUDRADrivers
	slices, err := draslices.Start(ctx, clients, draslices.Options{Node: cfg.NodeName, Drivers: cfg.GPUDRADrivers, Log: log.With("part", "dra")})
	if err != nil {
		return fmt.Errorf("DRA GPUs: %w", err)
	}
	if slices == nil {
		log.Info("DRA GPUs are not resolved: raild has no API server connection", "drivers", cfg.GPUDRADrivers)
		return nil
	}
	// only a real informer: a nil *Slices in the interfaces would not read as "off"
	opt.DRA, kubelet.DRA = slices, slices
	log.Info("DRA GPUs resolved through the node's ResourceSlices", "node", slices.Node(), "drivers", cfg.GPUDRADrivers)
	return nil
}
