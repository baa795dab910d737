package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/railpool"
	"github.com/railcni/rail/ipam"
)

// railPoolResync is how often raild looks again for RailPools that select
// its node, besides watching them (a Node's labels may change).
const railPoolResync = 5 * time.Minute

// nodePools builds this node's pools: the config's, plus a block of each
// RailPool that selects the node when raild talks to the API server
// (clients nil: config pools only, as without an API server). follow adds
// the RailPools that come later, until its ctx ends; it does nothing
// without clients.
func nodePools(ctx context.Context, cfg *config.Config, clients *kubeclient.Clients, log *slog.Logger) (pools *ipam.Pools, follow func(context.Context), err error) {
	claimer, fromCluster, err := startRailPools(ctx, clients, cfg.NodeName, cfg.Pools, log)
	if err != nil {
		return nil, nil, err
	}
	pools, err = ipam.NewPools(slices.Concat(cfg.Pools, fromCluster), cfg.NodeName)
	switch {
	case err != nil && len(fromCluster) > 0:
		return nil, nil, fmt.Errorf("config pools and railpools: %w", err)
	case err != nil:
		return nil, nil, fmt.Errorf("config pools: %w", err)
	case claimer == nil:
		return pools, func(context.Context) {}, nil
	}
	follow = func(ctx context.Context) {
		claimer.Follow(ctx, railPoolResync, pools, cfg.Pools, func(c railpool.Claim, err error) {
			logClaim(log, c, err)
		})
	}
	return pools, follow, nil
}

// startRailPools finds or claims this node's block of every RailPool that
// selects it and returns the equivalent config pools, each sliced to the
// block. nil clients: RailPools are off (nil claimer). An API server that
// cannot be asked does not stop raild (it serves its config pools and
// follow claims later); a RailPool it cannot serve does, with the reason.
func startRailPools(ctx context.Context, clients *kubeclient.Clients, node string, configPools []ipam.PoolConfig, log *slog.Logger) (*railpool.Claimer, []ipam.PoolConfig, error) {
	if clients == nil {
		return nil, nil, nil
	}
	claimer, err := railpool.NewClaimer(clients, node)
	if err != nil {
		return nil, nil, err
	}
	res, err := claimer.NodePools(ctx, configPools)
	for _, c := range res.Claims {
		logClaim(log, c, nil)
	}
	var unavailable *railpool.UnavailableError
	switch {
	case errors.As(err, &unavailable): // raild serves without the API server; follow claims once it answers
		log.Warn("railpools unavailable at start: serving the config's pools, RailPools follow when the API server answers", "error", err)
		return &claimer, nil, nil
	case err != nil:
		return nil, nil, err
	}
	return &claimer, res.Pools, nil
}

// logClaim logs a block raild holds (err nil) or why a RailPool got none.
func logClaim(log *slog.Logger, c railpool.Claim, err error) {
	var exhausted *railpool.ExhaustedError
	var unavailable *railpool.UnavailableError
	switch {
	case errors.As(err, &unavailable):
		log.Warn("railpools unavailable", "error", err)
	case errors.As(err, &exhausted):
		log.Error("railpool exhausted", "pool", exhausted.Pool, "error", err)
	case err != nil:
		log.Error("railpool refused", "pool", c.Pool, "error", err)
	default:
		log.Info("railpool block", "pool", c.Pool, "block", c.Block, "subnet", c.Subnet.String(), "kept", c.Kept, "attempts", c.Attempts)
	}
}
