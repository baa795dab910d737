package serve

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/draslices"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/topology"
)

// podResourcesTimeout bounds one PodResources call.
const podResourcesTimeout = 5 * time.Second

// startGPUSource builds the one GPU source the service (ADD) and NRI
// (gpuAutoInject, DRA NICs) share: the kubelet's PodResources API when a socket is
// configured, and the node's ResourceSlice informer when raild has an API
// connection (nil clients: DRA off, and a pod holding DRA GPUs fails ADD
// unless its netconf or pool says unresolvedGPUs: ignore). close releases
// the PodResources connection. Call it before service.New and nri.New.
func startGPUSource(ctx context.Context, clients *kubeclient.Clients, cfg *config.Config, machine func() *topology.Machine,
	log *slog.Logger) (src *podinfo.GPUSource, close func(), err error) {
	src = &podinfo.GPUSource{Resources: cfg.GPUResources, DRADrivers: cfg.GPUDRADrivers, NICDrivers: nicDrivers(cfg), Machine: machine}
	close = func() {}
	if cfg.PodResourcesSocket != "" {
		pods, err := podinfo.Dial(ctx, cfg.PodResourcesSocket, podResourcesTimeout)
		if err != nil {
			return nil, nil, fmt.Errorf("kubelet PodResources: %w", err)
		}
		src.Kubelet, close = pods, func() { _ = pods.Close() }
	}
	slices, err := draslices.Start(ctx, clients, draslices.Options{Node: cfg.NodeName, Drivers: cfg.GPUDRADrivers, NICDrivers: nicDrivers(cfg), Log: log.With("component", "dra")})
	if err != nil {
		close()
		return nil, nil, fmt.Errorf("DRA GPUs: %w", err)
	}
	if slices == nil {
		log.Info("DRA GPUs are not resolved: raild has no API server connection", "drivers", cfg.GPUDRADrivers)
		return src, close, nil
	}
	// only a real informer: a nil *Slices in the interface would not read as "off"
	src.DRA, src.NICs = slices, slices
	log.Info("DRA GPUs and NICs resolved through the node's ResourceSlices", "node", slices.Node(), "drivers", cfg.GPUDRADrivers,
		"nicDrivers", nicDrivers(cfg))
	return src, close, nil
}

// nicDrivers are the DRA NIC drivers raild completes: draNICDrivers when
// the NRI plugin is on (it does the work and keeps the table), else none
// (nothing reads the NIC drivers' slices, ADD resolves no DRA NIC).
func nicDrivers(cfg *config.Config) []string {
	if !cfg.NRI.Enabled {
		return nil
	}
	return cfg.DRANICDrivers
}

// draHeld is the table of the NICs DRA NIC drivers gave the node's pods,
// when raild completes such pods (nicDrivers).
func draHeld(cfg *config.Config) *podinfo.DRAHeld {
	if len(nicDrivers(cfg)) == 0 {
		return nil
	}
	return podinfo.NewDRAHeld()
}
