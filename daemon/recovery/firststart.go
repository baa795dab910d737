package recovery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/statedir"
	"github.com/railcni/rail/ipam"
)

// maxNamed bounds the pods a refusal names; the rest are counted.
const maxNamed = 3

// CheckLostStore is `raild serve`'s start check, run with the state dir
// locked and before the lease store is opened (which makes a new, empty
// store where there is none). With a store there (whatever its state) it
// does nothing. Without one, this is raild's first start on the node, or
// its store was removed: the NIC records an earlier raild left in the
// state dir, or a rail interface in a pod netns holding an address of one
// of raild's pools, say pods hold addresses an empty store would hand out
// again, and raild is refused with the way out (`raild recover`). Netns
// that cannot be read (all of them for a raild without CAP_SYS_ADMIN) are
// returned as problems to log: they neither prove nor disprove a first
// start.
func CheckLostStore(cfg *config.Config, pools *ipam.Pools) (problems []string, err error) {
	store := statedir.LeaseStorePath(cfg.StateDir)
	exists, err := ipam.StoreExists(store)
	if err != nil || exists {
		return nil, err
	}
	var evidence []string
	records := statedir.RecordsFile(cfg.StateDir)
	if _, err := os.Lstat(records); err == nil {
		evidence = append(evidence, "an earlier raild's NIC records "+records)
	}
	pods, problems, err := podsHolding(cfg.NetnsDir, pools)
	if err != nil {
		return nil, err
	}
	evidence = append(evidence, pods...)
	if len(evidence) == 0 {
		return problems, nil
	}
	return problems, fmt.Errorf("state dir %s: no lease store (%s and its side record are gone), but this is not raild's first start here: %s; an empty store would hand out again the addresses pods hold: refusing to serve: with raild stopped, run `raild recover --config <raild's config> --state-dir %s --netns-dir %s` to rebuild the leases from the pods on this node",
		cfg.StateDir, store, strings.Join(evidence, "; "), cfg.StateDir, cfg.NetnsDir)
}

// podsHolding names the rail interfaces in the netns under dir that hold
// an address of one of pools (at most maxNamed, then a count). A missing
// dir is no pods.
func podsHolding(dir string, pools *ipam.Pools) (found, problems []string, err error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	links, problems, err := scanNetnsDir(dir)
	if errors.Is(err, errNetnsDenied) {
		return nil, []string{err.Error()}, nil // the chart's raild: only the NIC records can tell
	}
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	n := 0
	for _, pl := range links {
		if pl.Rail == nil {
			continue // only rail's own interfaces: an address of another plugin's is no proof
		}
		l, ok, _ := leaseFor(pl, pools, now)
		if !ok {
			continue
		}
		if n++; n <= maxNamed {
			found = append(found, fmt.Sprintf("%s in pod netns %s holds %s of pool %s", pl.Name, pl.Netns, l.Address, l.Pool))
		}
	}
	if n > maxNamed {
		found = append(found, fmt.Sprintf("and %d more rail interfaces in pods", n-maxNamed))
	}
	return found, problems, nil
}
