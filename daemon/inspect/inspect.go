package inspect

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vishvananda/netns"

	"github.com/railcni/rail/daemon/nodenics"
	"github.com/railcni/rail/daemon/recovery"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet("raild "+name, flag.ContinueOnError)
}

func client(socket string) *api.Client { return api.NewClient(socket, 5*time.Second) }

// Topo is `raild topo`: it prints the topology: from --root (or with
// --topology-file) when given, else from a running raild when its socket
// answers, else from /.
func Topo(args []string) error {
	fs := newFlags("topo")
	root := fs.String("root", "", "sysfs/procfs/dev root to read (default: ask raild, else /)")
	socket := fs.String("socket", api.DefaultSocket, "raild socket")
	asJSON := fs.Bool("json", false, "print JSON")
	file := fs.String("topology-file", "", "an NCCL topology file to read the machine with (default: raild's, when it answers)")
	softRoCE := fs.Bool("soft-roce", false, "read the machine as a softRoCE node does: its Ethernet NICs without an RDMA device count, by their netdevs (default: raild's, when it answers)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	report, err := topoReport(*root, *socket, *file, topology.Options{NetdevNICs: *softRoCE})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(os.Stdout, report)
	}
	return topology.WriteText(os.Stdout, report)
}

// topoReport is raild's report when it answers (and neither root, file nor
// --soft-roce is given), else a read of root. A read of this host ("/") finds the
// node's own NICs by their addresses and routes too; a read of another
// root by what its sysfs shows (its netdevs are not this netns's).
func topoReport(root, socket, file string, opt topology.Options) (topology.Report, error) {
	var report topology.Report
	if root == "" && file == "" && !opt.NetdevNICs {
		if raw, err := client(socket).Topology(context.Background()); err == nil {
			return report, json.Unmarshal(raw, &report)
		}
	}
	if root == "" {
		root = "/"
	}
	var host *nodenics.Reader
	if root == "/" {
		host = &nodenics.Reader{NS: netns.None()}
	}
	return readReport(root, file, opt, host)
}

// readReport reads root (with the NCCL topology file, if any); with host,
// the protection of the node's own NICs includes their addresses and
// routes as host reads them.
func readReport(root, file string, opt topology.Options, host *nodenics.Reader) (topology.Report, error) {
	m, err := topology.DiscoverFile(root, file, opt)
	if err != nil {
		return topology.Report{}, fmt.Errorf("discover %s: %w", root, err)
	}
	if host == nil {
		return m.Report(), nil
	}
	protected, err := host.All(m)
	if err != nil {
		r := m.Report()
		r.Problems = append(r.Problems, topology.Problem{Device: "node NICs", Reason: err.Error() + " (protection from sysfs alone)"})
		return r, nil
	}
	return m.ReportWith(protected), nil
}

// Leases is `raild leases`; with --recover it is `raild recover`, whose
// flags it takes too.
func Leases(args []string) error {
	fs := newFlags("leases")
	socket := fs.String("socket", api.DefaultSocket, "raild socket")
	asJSON := fs.Bool("json", false, "print JSON")
	rebuild := fs.Bool("recover", false, "rebuild the lease store from the pods on this node (raild stopped): the same as raild recover, whose flags follow")
	var rf recovery.Flags
	rf.Define(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: raild leases takes flags only", fs.Arg(0))
	}
	if *rebuild {
		return recovery.Recover(fs, rf, os.Stdout)
	}
	if err := onlyListFlags(fs); err != nil {
		return err
	}
	leases, err := client(*socket).Leases(context.Background())
	if err != nil {
		return err
	}
	if *asJSON {
		if leases == nil {
			leases = []api.Lease{}
		}
		return printJSON(os.Stdout, leases)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SANDBOX\tIFNAME\tPOD\tPOOL\tADDRESS\tNICS\tMODE")
	for _, l := range leases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", short(l.Sandbox), l.IfName, pod(l), l.Pool, l.Address,
			leaseNICs(l), l.Mode)
	}
	return tw.Flush()
}

// leaseNICs is a lease's NICs column: its ports, and in vf mode its VF.
func leaseNICs(l api.Lease) string {
	nics := strings.Join(l.NICs, ",")
	if l.VF != "" {
		return strings.TrimPrefix(nics+" VF "+l.VF, " ")
	}
	return nics
}

// onlyListFlags refuses recover's flags without --recover: `raild leases
// --dry-run` must not list leases as if the flag meant something.
func onlyListFlags(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "socket" && f.Name != "json" && f.Name != "recover" && err == nil {
			err = fmt.Errorf("--%s is a flag of raild recover: run raild recover (or raild leases --recover) with it", f.Name)
		}
	})
	return err
}

// Pools is `raild pools`.
func Pools(args []string) error {
	fs := newFlags("pools")
	socket := fs.String("socket", api.DefaultSocket, "raild socket")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pools, err := client(*socket).Pools(context.Background())
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(os.Stdout, pools)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tSUBNET\tSIZE\tUSED\tCOOLING\tFREE\tRAIL\tNICS")
	for _, p := range pools {
		rail := "-"
		if p.Rail != nil {
			rail = fmt.Sprint(*p.Rail)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", p.Name, p.Subnet, p.Size, p.Used, p.Cooling, p.Free,
			rail, strings.Join(p.Bound, ","))
	}
	return tw.Flush()
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func pod(l api.Lease) string {
	if l.PodName == "" {
		return "-"
	}
	return l.PodNamespace + "/" + l.PodName
}
