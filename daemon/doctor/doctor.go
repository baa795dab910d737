package doctor

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// check is one line of `raild doctor`.
type check struct {
	level string // ok, warn, fail
	what  string
	fix   string
}

// Run is `raild doctor`: it checks the node and says what to fix.
func Run(args []string) error {
	fs := flag.NewFlagSet("raild doctor", flag.ContinueOnError)
	root := fs.String("root", "/", "root of /sys, /proc and /dev")
	socket := fs.String("socket", api.DefaultSocket, "raild socket")
	cniBin := fs.String("cni-bin-dir", "/opt/cni/bin", "CNI bin dir")
	nriSocket := fs.String("nri-socket", "/var/run/nri/nri.sock", "NRI socket")
	file := fs.String("topology-file", "", "the node's NCCL topology file (raild's topologyFile), checked against the machine")
	pod := fs.String("pod", "", "NAMESPACE/NAME: that pod's RDMA path from raild (GPUs, NICs, containers, readiness checks)")
	asJSON := fs.Bool("json", false, "with --pod: the report as JSON")
	softRoCE := fs.Bool("soft-roce", false, "the node runs raild in softRoCE mode (default: when raild answers with NICs placed by their netdevs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pod != "" {
		return podDoctor(os.Stdout, *socket, *pod, *asJSON)
	}
	var checks []check
	live, liveProblem := liveReport(*socket)
	machine, err := topology.DiscoverFile(*root, *file, topology.Options{NetdevNICs: *softRoCE || liveNetdevNICs(live)})
	if err != nil {
		checks = append(checks, check{"fail", "topology: " + err.Error(), "check --root"})
	} else {
		checks = append(checks, topologyChecks(machine, *root, awayInPods(live, machine))...)
		checks = append(checks, distanceChecks(machine)...)
		var holders map[string]string
		if live != nil {
			holders = live.Holders
		}
		checks = append(checks, sriovChecks(machine, livePools(*socket), holders)...)
	}
	checks = append(checks, liveProblem...)
	if live != nil {
		checks = append(checks, compareLive(*live, machine)...)
		checks = append(checks, leakedVFChecks(live.LeakedVFs)...)
	}
	protected, problems := nodeNICs(live, machine, *root)
	checks = append(append(checks, problems...), protectedChecks(protected)...)
	checks = append(checks, rdmaNetnsModeCheck(), socketCheck(*socket),
		fileCheck(filepath.Join(*cniBin, "rail"), "rail CNI plugin", "run `raild install-cni`"),
		fileCheck(*nriSocket, "NRI socket", "enable NRI in containerd ([plugins.'io.containerd.nri.v1.nri'] disable = false)"))
	failed := 0
	for _, c := range checks {
		line := fmt.Sprintf("[%-4s] %s", strings.ToUpper(c.level), c.what)
		if c.fix != "" && c.level != "ok" {
			line += " — " + c.fix
		}
		fmt.Println(line)
		if c.level == "fail" {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed", failed)
	}
	return nil
}

// topologyChecks judges what the host shows; inPods counts the NICs raild
// knows in pods that the host no longer shows (exclusive RDMA netns mode hides a
// moved device), so a node whose every NIC sits in a pod is not told to
// load a driver.
func topologyChecks(m *topology.Machine, root string, inPods int) []check {
	var out []check
	out = append(out, check{level: levelIf(len(m.GPUs) > 0, "warn"), what: fmt.Sprintf("%d NVIDIA GPU(s) bound to the nvidia driver", len(m.GPUs)),
		fix: "without GPUs, pods are placed by NIC selector alone"})
	count := nicCount(m)
	if inPods > 0 {
		count += fmt.Sprintf(", %d more in pods (raild)", inPods)
	}
	fix := "load the NIC's RDMA driver (mlx5_ib) or rdma_rxe"
	if m.NetdevNICs {
		fix = "a softRoCE node places its Ethernet PCI NICs (virtio-net, e1000e, ...) by their netdevs: give it one that is not its own"
	}
	out = append(out, check{level: levelIf(len(m.NICs)+inPods > 0, "fail"), what: count, fix: fix})
	checked := map[string]bool{} // uverbs nodes, one per RDMA device whatever its ports
	for _, nic := range m.NICs {
		ok := nic.State == topology.PortActive
		if nic.NetdevOnly {
			out = append(out, check{level: levelIf(ok, "warn"), what: fmt.Sprintf("%s (%s, no RDMA device) netdev %s", nic.Name, nic.LinkLayer, nic.State),
				fix: "a NIC whose netdev is not up is never chosen: ip link set " + nic.Netdev + " up, and check its link"})
			continue
		}
		out = append(out, check{level: levelIf(ok, "warn"), what: fmt.Sprintf("%s (%s, %s) port %d %s", nic.Name, nic.Netdev, nic.LinkLayer, nic.PortNum(), nic.State),
			fix: "a NIC whose port is not ACTIVE is never chosen: check cabling and the subnet manager"})
		if nic.Uverbs != nil && !checked[nic.Uverbs.Path] {
			checked[nic.Uverbs.Path] = true
			_, err := os.Stat(filepath.Join(root, nic.Uverbs.Path))
			out = append(out, check{level: levelIf(err == nil, "warn"), what: fmt.Sprintf("%s device node %s", nic.RDMADevice(), nic.Uverbs.Path),
				fix: "load ib_uverbs"})
		}
	}
	out = append(out, check{level: levelIf(m.RdmaCM != nil, "warn"), what: "rdma_cm device", fix: "load rdma_ucm"})
	if m.NetdevNICs {
		for _, n := range m.SoftRDMANICs() {
			out = append(out, check{level: "fail", what: "softRoCE: " + n.StandInProblem(), fix: "rdma link delete " + n.RDMADevice()})
		}
	}
	for _, p := range m.Problems {
		out = append(out, check{level: "warn", what: p.Device + ": " + p.Reason})
	}
	return out
}

// nicCount says how many RDMA devices there are and, when some have
// several ports, how many ports (each a NIC of its own); on a softRoCE
// node also how many NICs without an RDMA device.
func nicCount(m *topology.Machine) string {
	devices := map[string]bool{}
	ports, netdevOnly := 0, 0
	for _, n := range m.NICs {
		if n.NetdevOnly {
			netdevOnly++
			continue
		}
		devices[n.RDMADevice()] = true
		ports++
	}
	text := fmt.Sprintf("%d RDMA device(s) in /sys/class/infiniband", len(devices))
	if len(devices) != ports {
		text += fmt.Sprintf(", %d ports (each a NIC of its own)", ports)
	}
	if m.NetdevNICs {
		text = fmt.Sprintf("%d NIC(s) without an RDMA device, placed by their netdevs (softRoCE); ", netdevOnly) + text
	}
	return text
}

func rdmaNetnsModeCheck() check {
	mode, err := rdma.SystemNetnsMode()
	switch {
	case err != nil:
		return check{"warn", "RDMA netns mode: " + err.Error(), ""}
	case mode == "":
		return check{"warn", "RDMA netns mode: this kernel has no RDMA subsystem", "load ib_core"}
	default:
		return check{"ok", "RDMA netns mode: " + string(mode) + " (move works in both; macvlan and ipoib need shared)", ""}
	}
}

func socketCheck(socket string) check {
	if _, err := api.NewClient(socket, 5*time.Second).Status(context.Background(), ""); err != nil {
		return check{"fail", "raild socket " + socket + ": " + err.Error(), "start raild (the DaemonSet)"}
	}
	return check{"ok", "raild answers on " + socket, ""}
}

func fileCheck(path, what, fix string) check {
	if _, err := os.Stat(path); err != nil {
		return check{"warn", what + " missing at " + path, fix}
	}
	return check{"ok", what + " at " + path, ""}
}

func levelIf(ok bool, otherwise string) string {
	if ok {
		return "ok"
	}
	return otherwise
}
