// Command raild is Rail's node daemon and its node tools.
package main

import (
	"fmt"
	"os"

	"github.com/railcni/rail/daemon/doctor"
	"github.com/railcni/rail/daemon/inspect"
	"github.com/railcni/rail/daemon/installcni"
	"github.com/railcni/rail/daemon/recovery"
	"github.com/railcni/rail/daemon/serve"
)

const usage = `raild — Rail's node daemon: GPU-affine RDMA NICs for pods

Usage:
  raild serve       [--config FILE] [--root DIR] [--socket PATH] [--state-dir DIR] [--netns-dir DIR]
                    [--node-name NAME] [--pod-resources-socket PATH] [--metrics-addr ADDR] [--log-level LEVEL]
                    [--proc-root DIR]
  raild topo        [--root DIR] [--socket PATH] [--json]   the node's GPUs, NICs, distances, affinity
  raild leases      [--socket PATH] [--json]                leases held on this node
  raild recover     [--config FILE] [--state-dir DIR] [--netns-dir DIR] [--node-name NAME] [--dry-run]
                    rebuild the lease store from the pods on this node (raild stopped);
                    raild leases --recover is the same
  raild pools       [--socket PATH] [--json]                pools and their use on this node
  raild doctor      [--root DIR] [--socket PATH] [--cni-bin-dir DIR] [--nri-socket PATH]
  raild doctor      --pod NAMESPACE/NAME [--socket PATH] [--json]
                    one pod's RDMA path: GPUs, NICs and why, containers' devices, memlock and env,
                    the rail.dev/RDMAReady checks with what failed and the fix
  raild install-cni [--from DIR] [--to DIR] [--config FILE] [--conf-dir DIR] [--mode chained|nad]
                    [--entry JSON | --entry-file FILE] [--uninstall]
                    copy rail and rail-ipam into the CNI bin dir; chained: put rail's entry into
                    the primary's conflist; --uninstall: take it out again
`

// commands are raild's commands, each a package of its own.
func commands() map[string]func([]string) error {
	return map[string]func([]string) error{
		"serve":       serve.Run,
		"topo":        inspect.Topo,
		"leases":      inspect.Leases,
		"recover":     recovery.Run,
		"pools":       inspect.Pools,
		"doctor":      doctor.Run,
		"install-cni": installcni.Run,
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	name := os.Args[1]
	if name == "-h" || name == "--help" || name == "help" {
		fmt.Print(usage)
		return
	}
	run, ok := commands()[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "raild: unknown command %q\n\n%s", name, usage)
		os.Exit(2)
	}
	if err := run(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "raild %s: %v\n", name, err)
		os.Exit(1)
	}
}
