package railpool

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/railcni/rail/ipam"
)

// Follow adds to pools a block of every RailPool that comes to select
// this node after start: on each change of the RailPools (a watch) and
// every resync (which also catches the Node's labels changing), it claims
// blocks of the pools pools does not hold yet and adds them. report is
// told of each pool added (err nil) and each refused; a refused pool is
// tried again at the next change or resync. It returns when ctx ends.
func (c Claimer) Follow(ctx context.Context, resync time.Duration, pools *ipam.Pools, configPools []ipam.PoolConfig, report func(Claim, error)) {
	kick := make(chan struct{}, 1)
	poke := func() {
		select {
		case kick <- struct{}{}:
		default: // a pass is already due
		}
	}
	watch := c.Watch
	if watch == nil {
		watch = c.Dyn
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(watch, resync)
	informer := factory.ForResource(PoolResource).Informer()
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
	})
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		}
		c.addNew(ctx, pools, configPools, report)
	}
}

// addNew claims the pools not held yet and adds them to pools.
func (c Claimer) addNew(ctx context.Context, pools *ipam.Pools, configPools []ipam.PoolConfig, report func(Claim, error)) {
	held := map[string]bool{}
	for _, name := range pools.Names() {
		held[name] = true
	}
	for _, p := range configPools {
		delete(held, p.Name) // a RailPool of a config pool's name is a clash, reported
	}
	res, err := c.Claim(ctx, configPools, held)
	if err != nil {
		report(Claim{}, err)
	}
	for i, claim := range res.Claims {
		report(claim, pools.Add(res.Pools[i], fmt.Sprintf("railpool %q: spec", claim.Pool)))
	}
}
