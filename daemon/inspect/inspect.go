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
	if err := fs.Parse(args); err != nil {
		return err
	}
	report, err := topoReport(*root, *socket, *file)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(os.Stdout, report)
	}
	return topology.WriteText(os.Stdout, report)
}

func topoReport(root, socket, file string) (topology.Report, error) {
	var report topology.Report
	if root == "" && file == "" {
		if raw, err := client(socket).Topology(context.Background()); err == nil {
			return report, json.Unmarshal(raw, &report)
		}
	}
	if root == "" {
		root = "/"
	}
	m, err := topology.DiscoverFile(root, file)
	if err != nil {
		return report, fmt.Errorf("discover %s: %w", root, err)
	}
	return m.Report(), nil
}

// Leases is `raild leases` (and, with --recover, `raild recover`).
func Leases(args []string) error {
	if recovery.Requested(args) {
		return recovery.Run(args)
	}
	fs := newFlags("leases")
	socket := fs.String("socket", api.DefaultSocket, "raild socket")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
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
			strings.Join(l.NICs, ","), l.Mode)
	}
	return tw.Flush()
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
