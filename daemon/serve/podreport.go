package serve

import (
	"context"
	"log/slog"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/podreport"
)

// startPodReport starts telling the cluster what raild does for pods:
// Events, rail's interfaces in network-status in chained mode, and the
// rail.dev/RDMAReady condition. With no
// API server (clients nil) nothing is reported and the result is nil.
func startPodReport(ctx context.Context, clients *kubeclient.Clients, nodeName string, m *metrics.Metrics, log *slog.Logger) (*podreport.Reporter, error) {
	if clients == nil || clients.Kube == nil {
		return nil, nil
	}
	opt := podreport.Options{NodeName: nodeName, Log: log}
	if m != nil {
		opt.Registerer = m.Registry
	}
	return podreport.Start(ctx, clients.Kube, opt)
}
