package serve

import (
	"context"
	"log/slog"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/podreport"
	"github.com/railcni/rail/daemon/service"
)

// startPodReport starts telling the cluster what raild does for pods:
// Events, and rail's interfaces in network-status in chained mode. With no
// API server (clients nil) nothing is reported and the result is nil, so
// it can go into service.Options.Reporter as it is.
func startPodReport(ctx context.Context, clients *kubeclient.Clients, nodeName string, m *metrics.Metrics, log *slog.Logger) (service.Reporter, error) {
	if clients == nil || clients.Kube == nil {
		return nil, nil
	}
	opt := podreport.Options{NodeName: nodeName, Log: log}
	if m != nil {
		opt.Registerer = m.Registry
	}
	r, err := podreport.Start(ctx, clients.Kube, opt)
	if err != nil {
		return nil, err
	}
	return r, nil
}
