package recovery

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/statedir"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/topology"
)

// Flags are `raild recover`'s flags; `raild leases --recover` takes the
// same ones.
type Flags struct {
	Config, StateDir, NodeName, NetnsDir string
	DryRun                               bool
}

// Define adds the flags to fs.
func (f *Flags) Define(fs *flag.FlagSet) {
	fs.StringVar(&f.Config, "config", "", "raild's YAML config (for its pools, state dir and netns dir)")
	fs.StringVar(&f.StateDir, "state-dir", "", "lease store directory (default: the config's, else "+config.DefaultStateDir+")")
	fs.StringVar(&f.NodeName, "node-name", "", "this node's name (default: the config's, else $NODE_NAME)")
	fs.StringVar(&f.NetnsDir, "netns-dir", "", "where the runtime keeps pod netns bind mounts (default: the config's, else "+config.DefaultNetnsDir+")")
	fs.BoolVar(&f.DryRun, "dry-run", false, "print what would be rebuilt, change nothing")
}

// Run is `raild recover`: it rebuilds the lease store from the pods on
// this node, with raild stopped. The addresses on the pods' interfaces are
// the truth; the old store is moved aside.
func Run(args []string) error { return run(args, os.Stdout) }

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("raild recover", flag.ContinueOnError)
	var f Flags
	f.Define(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: raild recover takes flags only", fs.Arg(0))
	}
	return Recover(fs, f, out)
}

// Recover rebuilds the lease store as f says; fs is the parsed flag set
// that holds f (the flags set on it win over the config file's values).
func Recover(fs *flag.FlagSet, f Flags, out io.Writer) error {
	cfg, pools, err := recoverConfig(fs, f)
	if err != nil {
		return err
	}
	links, problems, err := scanNetnsDir(cfg.NetnsDir)
	if errors.Is(err, errNetnsDenied) {
		return fmt.Errorf("cannot read the pods' addresses: %w: run raild recover as root on the host (or in a privileged container); a store rebuilt without them would hand them out again", err)
	}
	if err != nil {
		return err
	}
	now := time.Now()
	leases, skipped := leasesFromPods(links, pools, now)
	writeRecovery(out, leases, append(problems, skipped...))
	path := statedir.LeaseStorePath(cfg.StateDir)
	if f.DryRun {
		fmt.Fprintf(out, "dry run: %s left as it is\n", path)
		return nil
	}
	lock, err := statedir.LockDir(cfg.StateDir) // never rebuild under a running raild
	if err != nil {
		return err
	}
	defer lock.Unlock()
	moved, err := ipam.Rebuild(path, pools, leases, now)
	if err != nil {
		return err
	}
	for _, m := range moved {
		fmt.Fprintf(out, "kept the old file as %s\n", m)
	}
	fmt.Fprintf(out, "wrote %s with %d leases: raild serve can start\n", path, len(leases))
	return nil
}

func recoverConfig(fs *flag.FlagSet, f Flags) (*config.Config, *ipam.Pools, error) {
	cfg, err := config.LoadWithFlags(fs, config.Flags{Config: f.Config, StateDir: f.StateDir, NodeName: f.NodeName, NetnsDir: f.NetnsDir})
	if err != nil {
		return nil, nil, err
	}
	pools, err := ipam.NewPools(cfg.Pools, cfg.NodeName)
	if err != nil {
		return nil, nil, fmt.Errorf("config pools: %w", err)
	}
	return cfg, pools, nil
}

// leasesFromPods turns the addresses found in pods into leases: one per
// interface, for its first address inside a pool. Interfaces rail made
// carry their owner in their alias; others (addresses from rail-ipam under
// another plugin, or a rail older than the owner record) are kept under
// the placeholder sandbox "netns:<name>", so their address is not handed
// out again while the pod lives, and released once its netns is gone. An
// address found twice goes to the interface that records its owner, else
// the first found; the other is reported.
func leasesFromPods(links []podLink, pools *ipam.Pools, now time.Time) (leases []ipam.Lease, skipped []string) {
	links = slices.Clone(links)
	slices.SortStableFunc(links, func(a, b podLink) int { return evidence(b) - evidence(a) })
	holder := map[netip.Addr]string{}
	for _, pl := range links {
		l, ok, note := leaseFor(pl, pools, now)
		where := pl.Netns + " " + pl.Name
		switch {
		case note != "":
			skipped = append(skipped, where+": "+note)
			continue
		case !ok:
			continue
		case holder[l.Address.Addr()] != "":
			skipped = append(skipped, fmt.Sprintf("%s: %s is also on %s: kept there, check both pods", where, l.Address.Addr(), holder[l.Address.Addr()]))
			continue
		}
		holder[l.Address.Addr()] = where
		leases = append(leases, l)
	}
	return leases, skipped
}

// evidence ranks what an interface says about its lease: 2 for a rail
// alias with its owner, 1 for a rail alias, 0 for none.
func evidence(pl podLink) int {
	switch {
	case pl.Rail == nil:
		return 0
	case pl.Rail.Owner.Sandbox == "":
		return 1
	}
	return 2
}

// nicOfOwner is raild's name of the NIC an alias records: its RDMA
// device, or "<device>:<port>" for a port other than 1 (see
// topology.TargetName).
func nicOfOwner(o attach.Owner) string {
	port, err := strconv.Atoi(o.NICPort)
	if err != nil {
		return o.NIC
	}
	return topology.TargetName(o.NIC, port)
}

// leaseFor is the lease of one interface; ok is false for an interface
// that is none of raild's business, note says why a rail one is left out.
func leaseFor(pl podLink, pools *ipam.Pools, now time.Time) (l ipam.Lease, ok bool, note string) {
	var owner attach.Owner
	mode := ""
	if pl.Rail != nil {
		owner, mode = pl.Rail.Owner, string(pl.Rail.Mode)
	}
	for _, a := range pl.Addrs {
		pool := poolOf(a.Addr(), owner.Pool, pools)
		if pool == nil {
			continue
		}
		l := ipam.Lease{Sandbox: owner.Sandbox, IfName: pl.Name, CNIIfName: owner.CNIIfName, Network: owner.Network,
			Pool: pool.Name(), Address: netip.PrefixFrom(a.Addr(), pool.Prefix.Bits()), Gateway: pool.Gateway,
			Mode: mode, Netns: pl.Netns, Created: now}
		if owner.NIC != "" {
			l.NICs = []string{nicOfOwner(owner)}
		}
		if l.Sandbox == "" {
			l.Sandbox = "netns:" + filepath.Base(pl.Netns)
		}
		return l, true, ""
	}
	if pl.Rail == nil {
		return ipam.Lease{}, false, ""
	}
	return ipam.Lease{}, false, fmt.Sprintf("rail interface whose addresses %v are in no configured pool: not recovered", pl.Addrs)
}

// poolOf is the pool an address belongs to: the recorded one when it
// holds it, else the first whose subnet does.
func poolOf(addr netip.Addr, recorded string, pools *ipam.Pools) *ipam.Pool {
	if p, ok := pools.Get(recorded); ok && p.Prefix.Contains(addr) {
		return p
	}
	for _, p := range pools.List() {
		if p.Prefix.Contains(addr) {
			return p
		}
	}
	return nil
}

func writeRecovery(w io.Writer, leases []ipam.Lease, skipped []string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SANDBOX\tIFNAME\tNETWORK\tPOOL\tADDRESS\tNICS\tMODE\tNETNS")
	for _, l := range leases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", short(l.Sandbox), l.IfName, dash(l.Network), l.Pool, l.Address,
			dash(strings.Join(l.NICs, ",")), dash(l.Mode), l.Netns)
	}
	_ = tw.Flush()
	for _, s := range skipped {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
