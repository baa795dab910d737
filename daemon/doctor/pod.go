package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// podDoctor is `raild doctor --pod NAMESPACE/NAME`: the pod's RDMA path
// from raild, checked now; an error when it is not ready.
func podDoctor(w io.Writer, socket, pod string, asJSON bool) error {
	ns, name, ok := strings.Cut(pod, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("--pod %q: want NAMESPACE/NAME", pod)
	}
	report, err := api.NewClient(socket, 10*time.Second).PodReport(context.Background(), ns, name)
	if err != nil {
		return fmt.Errorf("ask raild at %s: %w", socket, err)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else {
		writePodReport(w, report)
	}
	if !report.Ready {
		return errors.New("the pod's RDMA path is not ready (rail.dev/RDMAReady False)")
	}
	return nil
}

// writePodReport prints one screen: GPUs, interfaces, containers, checks.
func writePodReport(w io.Writer, r *api.PodReport) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("pod %s/%s (uid %s, sandbox %s)", r.Namespace, r.Name, orNone(r.UID), r.Sandbox)
	p("rail.dev/RDMAReady: %s", readyWord(r))
	if len(r.GPUs) == 0 {
		p("GPUs: none known to placement (raild restarted since the ADD, or the pod holds none)")
	} else {
		gpus := make([]string, len(r.GPUs))
		for i, g := range r.GPUs {
			gpus[i] = fmt.Sprintf("GPU%d %s", g.Index, g.PCI)
		}
		from := "as placement saw them"
		if r.GPUSource != "" {
			from = "from " + r.GPUSource
		}
		p("GPUs (%s): %s", from, strings.Join(gpus, ", "))
	}
	p("interfaces:")
	for _, i := range r.Interfaces {
		writeInterface(p, i)
	}
	if note := gidDisagreement(r.Interfaces); note != "" {
		p("%s", note)
	}
	if len(r.Containers) > 0 {
		p("containers (read from their own /proc/<pid>):")
	}
	for _, c := range r.Containers {
		writeContainer(p, c)
	}
	p("checks:")
	for _, c := range r.Checks {
		line := fmt.Sprintf("  [%-4s] %s %s: %s", strings.ToUpper(string(c.Status)), c.Subject, c.Name, c.Message)
		if c.Status == api.CheckFail && c.Fix != "" {
			line += " — fix: " + c.Fix
		}
		p("%s", line)
	}
}

func writeInterface(p func(string, ...any), i api.PodInterface) {
	nic := "no NIC"
	if n := i.NIC; n != nil {
		nic = fmt.Sprintf("%s port %d", n.RDMADevice, max(n.Port, 1))
		var about []string
		for _, s := range []string{string(n.LinkLayer), prefixed("netdev ", n.Netdev), prefixed("pci ", n.PCI)} {
			if s != "" {
				about = append(about, s)
			}
		}
		if len(about) > 0 {
			nic += " (" + strings.Join(about, ", ") + ")"
		}
	}
	how := "mode " + string(i.Mode)
	if i.DRA != nil {
		how = fmt.Sprintf("from DRA claim %s (driver %s)", i.DRA.Claim, i.DRA.Driver)
	}
	p("  %s  %s  %s  %s", i.Name, how, nic, strings.Join(i.Addresses, ", "))
	if i.DRA != nil && i.DRA.Device != "" {
		p("    device %s: moved into the pod by its driver; raild only completes and checks it", i.DRA.Device)
	}
	if i.Network != "" {
		p("    network %s", i.Network)
	}
	if i.Distance != "" || i.Reason != "" {
		p("    placed: %s %s", i.Distance, i.Reason)
	}
	if len(i.Distances) > 0 {
		d := make([]string, len(i.Distances))
		for k, g := range i.Distances {
			d[k] = fmt.Sprintf("GPU%d %s", g.GPU, g.Class)
			if g.Chose {
				d[k] += " (chose it)"
			}
		}
		p("    distance to each GPU: %s", strings.Join(d, ", "))
	}
	gid := "GID: -"
	if i.GIDIndex != nil {
		gid = fmt.Sprintf("GID index %d: %s", *i.GIDIndex, orNone(i.GID))
	}
	netns := ""
	if i.ExclusiveRDMA {
		netns = "; RDMA device in the pod's netns (exclusive mode)"
	}
	p("    port %s; %s%s", i.PortState, gid, netns)
}

func writeContainer(p func(string, ...any), c api.PodContainer) {
	pid := "not started"
	if c.Pid > 0 {
		pid = fmt.Sprintf("pid %d", c.Pid)
	}
	p("  %s (%s)", c.Name, pid)
	p("    device nodes injected: %s", orNone(strings.Join(c.Injected, ", ")))
	if len(c.DriverInjected) > 0 {
		p("    device nodes its DRA claims' driver injects: %s", strings.Join(c.DriverInjected, ", "))
	}
	p("    device nodes present:  %s", orNone(strings.Join(c.Present, ", ")))
	if c.MemlockWanted > 0 || c.Memlock != "" {
		p("    memlock: %s (raild set %s)", orNone(c.Memlock), bytesOrUnlimited(c.MemlockWanted))
	}
	p("    NCCL/UCX env: %s", orNone(strings.Join(c.Env, " ")))
}

// bytesOrUnlimited prints a limit as /proc/<pid>/limits does.
func bytesOrUnlimited(v uint64) string {
	if v == math.MaxUint64 {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

func readyWord(r *api.PodReport) string {
	if r.Ready {
		return "True"
	}
	for _, c := range r.Checks {
		if c.Status == api.CheckFail {
			return "False (" + c.Reason + ": " + c.Subject + ": " + c.Message + ")"
		}
	}
	return "False"
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
