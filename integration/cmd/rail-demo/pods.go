package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// addPods creates each pod's netns and runs ADD of the chain for it, then
// prints what it got.
func addPods(ctx context.Context, out io.Writer, node *harness.Node, network *harness.Network, pods []*demoPod) error {
	report, err := node.Raild.Topology()
	if err != nil {
		return err
	}
	for _, p := range pods {
		pod, err := node.NewPod("default", p.name, nil)
		if err != nil {
			return err
		}
		p.pod = pod
		if _, err := network.Add(ctx, pod); err != nil {
			return fmt.Errorf("CNI ADD of pod %s: %w", p.name, err)
		}
		leases, err := node.Raild.Leases()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(leases, func(l api.Lease) bool { return l.Sandbox == pod.Sandbox })
		if i < 0 {
			return fmt.Errorf("raild holds no lease for pod %s after ADD", p.name)
		}
		p.lease = leases[i]
		if err := printPod(out, node, report, p); err != nil {
			return err
		}
	}
	return nil
}

func printPod(out io.Writer, node *harness.Node, report topology.Report, p *demoPod) error {
	uuids, err := node.Machine.GPUUUIDs(p.gpus...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\npod default/%s  (CNI ADD: ptp → rail)\n", p.name)
	fmt.Fprintf(out, "  GPUs     %s  (kubelet: %s)\n", joinInts(p.gpus), strings.Join(shortUUIDs(uuids), ", "))
	for _, nic := range p.lease.NICs {
		spec, _ := node.Machine.NIC(nic)
		fmt.Fprintf(out, "  NIC      %s → %s in the pod  (netdev %s, PCI %s)\n", nic, p.lease.IfName, node.Machine.Netdevs[nic], spec.PCI)
		fmt.Fprintf(out, "  why      %s\n", why(report, p.gpus, nic))
	}
	eth0, err := describeEth0(p.pod)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  eth0     %s\n", eth0)
	fmt.Fprintf(out, "  %-8s %s  (lease from raild pool %q)\n", p.lease.IfName, p.lease.Address, p.lease.Pool)
	return nil
}

func shortUUIDs(uuids []string) []string {
	out := make([]string, len(uuids))
	for i, u := range uuids {
		if len(u) > 12 {
			u = u[:12] + "…"
		}
		out[i] = u
	}
	return out
}

// classMeaning says in a few words what a distance class crosses.
var classMeaning = map[topology.Class]string{
	topology.PIX:  "same PCIe switch",
	topology.PXB:  "several PCIe switches, same root port",
	topology.PHB:  "same PCIe host bridge",
	topology.P2C:  "the GPU's C2C link to its CPU socket, then PCIe",
	topology.NODE: "same NUMA node, other host bridge",
	topology.SYS:  "across the CPU sockets",
}

// why explains a pick from `raild topo`: the class from the pod's GPUs to
// the NIC, and to each other NIC.
func why(report topology.Report, gpus []int, nic string) string {
	class := worstClass(report, gpus, nic)
	var others []string
	for _, n := range report.NICs {
		if n.Name != nic {
			others = append(others, fmt.Sprintf("%s %s", n.Name, worstClass(report, gpus, n.Name)))
		}
	}
	return fmt.Sprintf("%s from GPU %s: %s (raild topo; other NICs: %s)",
		class, joinInts(gpus), classMeaning[class], strings.Join(others, ", "))
}

// worstClass is the farthest class from any of the GPUs to nic.
func worstClass(report topology.Report, gpus []int, nic string) topology.Class {
	worst := topology.PIX
	for _, g := range gpus {
		if c, ok := report.Matrix[strconv.Itoa(g)][nic]; ok && c > worst {
			worst = c
		}
	}
	return worst
}

func describeEth0(pod *harness.Pod) (string, error) {
	link, found, err := pod.Link("eth0")
	if err != nil || !found {
		return "", fmt.Errorf("pod %s has no eth0 (found=%v): %v", pod.Name, found, err)
	}
	routes, err := pod.Routes()
	if err != nil {
		return "", err
	}
	text := strings.Join(link.Addrs, ", ")
	for _, r := range routes {
		if r.Dst == "default" && r.Dev == "eth0" {
			text += ", default via " + r.GW
		}
	}
	return text, nil
}

// talk has each pod serve HTTP on its rail address :8000 and GET the other.
func talk(ctx context.Context, out io.Writer, pods []*demoPod) error {
	fmt.Fprintf(out, "\ntraffic over the rail (HTTP on :%s, each pod bound to its rail address)\n", railPort)
	for _, p := range pods {
		if _, err := p.pod.Serve(net.JoinHostPort(railIP(p), railPort)); err != nil {
			return err
		}
	}
	for i, from := range pods {
		to := pods[(i+1)%len(pods)]
		url := fmt.Sprintf("http://%s/", net.JoinHostPort(railIP(to), railPort))
		answer, err := from.pod.Get(ctx, url)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-8s GET %-24s ← %q\n", from.name, url, answer)
	}
	return nil
}

func railIP(p *demoPod) string {
	ip, _, err := net.ParseCIDR(p.lease.Address)
	if err != nil {
		return p.lease.Address
	}
	return ip.String()
}
