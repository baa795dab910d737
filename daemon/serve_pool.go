package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/railpool"
	"github.com/railcni/rail/ipam"
)

// nodePools builds this node's pools: the config's, plus a block of each
// RailPool that selects the node when raild talks to the API server
// (clients nil: config pools only, as without an API server).
func nodePools(ctx context.Context, cfg *config.Config, clients *kubeclient.Clients, log *slog.Logger) (*ipam.Pools, error) {
	fromCluster, err := startRailPools(ctx, clients, cfg.NodeName, cfg.Pools, log)
	if err != nil {
		return nil, err
	}
	pools, err := ipam.NewPools(slices.Concat(cfg.Pools, fromCluster), cfg.NodeName)
	if err != nil && len(fromCluster) > 0 {
		return nil, fmt.Errorf("config pools and railpools: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("config pools: %w", err)
	}
	return pools, nil
}

// startRailPools finds or claims this node's block of every RailPool that
// selects it and returns the equivalent config pools, each sliced to the
// block. nil clients: RailPools are off.
func startRailPools(ctx context.Context, clients *kubeclient.Clients, node string, configPools []ipam.PoolConfig, log *slog.Logger) ([]ipam.PoolConfig, error) {
	if clients == nil {
		return nil, nil
	}
	claimer, err := railpool.NewClaimer(clients, node)
	if err != nil {
		return nil, err
	}
	res, err := claimer.NodePools(ctx, configPools)
	for _, c := range res.Claims {
		log.Info("railpool block", "pool", c.Pool, "block", c.Block, "subnet", c.Subnet.String(), "kept", c.Kept, "attempts", c.Attempts)
	}
	if err != nil {
		return nil, err
	}
	return res.Pools, nil
}
