package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/integration/kubeletstub"
	"github.com/railcni/rail/pkg/api"
)

const (
	defaultMachine = "h100x8-cx7x4"
	ptpSubnet      = "10.88.0.0/24"
	railPort       = "8000"
)

// demoPod is one pod of the demo and what it got.
type demoPod struct {
	name  string
	gpus  []int
	pod   *harness.Pod
	lease api.Lease
}

func run(ctx context.Context, opt options, out io.Writer) (retErr error) {
	if err := checkSetup(opt); err != nil {
		return err
	}
	bins, err := prepareBins(opt, out)
	if err != nil {
		return err
	}
	pods, err := demoPods(opt.machine)
	if err != nil {
		return err
	}
	node, err := harness.NewNode(harness.NodeOptions{Machine: opt.machine, Bins: bins, Kubelet: []kubeletstub.Pod{},
		TopologyFile: opt.topologyFile})
	if err != nil {
		return fmt.Errorf("set up the simulated node: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			retErr = errors.Join(retErr, node.Close())
		}
	}()
	if err := setKubelet(node, pods); err != nil {
		return err
	}
	before, err := node.Snapshot()
	if err != nil {
		return err
	}
	network, err := node.Network("rail-demo", "1.1.0", node.PTP(ptpSubnet), node.RailPlugin(map[string]any{"mode": api.ModeMove}))
	if err != nil {
		return err
	}
	printNode(out, node, pods, opt)
	if err := addPods(ctx, out, node, network, pods); err != nil {
		return err
	}
	if err := talk(ctx, out, pods); err != nil {
		return err
	}
	if err := printLeases(out, node); err != nil {
		return err
	}
	if opt.keep {
		waitForInspection(ctx, out, node, pods)
	}
	closed = true
	return teardown(out, node, network, pods, before)
}

func prepareBins(opt options, out io.Writer) (harness.Bins, error) {
	bin, err := filepath.Abs(opt.bin)
	if err != nil {
		return harness.Bins{}, err
	}
	plugins := opt.plugins
	if plugins == "" {
		fmt.Fprintln(out, "Preparing the upstream CNI plugins (ptp, host-local; built once from the Go module cache)...")
		if plugins, err = harness.UpstreamPluginDir(harness.DefaultCacheDir()); err != nil {
			return harness.Bins{}, err
		}
	}
	return harness.Bins{Rail: bin, Plugins: plugins}, nil
}

// setKubelet tells the PodResources stand-in which GPUs (by UUID, as the
// NVIDIA device plugin reports them) each pod holds.
func setKubelet(node *harness.Node, pods []*demoPod) error {
	var stub []kubeletstub.Pod
	for _, p := range pods {
		uuids, err := node.Machine.GPUUUIDs(p.gpus...)
		if err != nil {
			return err
		}
		stub = append(stub, kubeletstub.Pod{Namespace: "default", Name: p.name,
			Containers: []kubeletstub.Container{{Name: "main", Devices: map[string][]string{"nvidia.com/gpu": uuids}}}})
	}
	return node.Kubelet.SetPods(stub)
}

func printNode(out io.Writer, node *harness.Node, pods []*demoPod, opt options) {
	spec := node.Machine.Spec
	var nics, standIns []string
	for _, s := range node.Fabric.NICs() {
		nics = append(nics, s.RDMA)
		standIns = append(standIns, s.Name)
	}
	fmt.Fprintf(out, "\nRail demo: a simulated node (%s) in network namespaces on this kernel\n\n", opt.machine)
	fmt.Fprintf(out, "  node     %d × %s, %d RDMA NIC(s) (%s)\n", len(spec.GPUs), spec.GPUs[0].Model, len(nics), strings.Join(nics, ", "))
	if opt.topologyFile != "" {
		fmt.Fprintf(out, "           distances from the NCCL topology file %s\n", opt.topologyFile)
	}
	fmt.Fprintf(out, "           fake sysfs in %s; stand-in NIC netdevs (veth): %s\n", node.Machine.Root, strings.Join(standIns, ", "))
	var holds []string
	for _, p := range pods {
		holds = append(holds, fmt.Sprintf("default/%s → GPU %s", p.name, joinInts(p.gpus)))
	}
	fmt.Fprintf(out, "  kubelet  PodResources stand-in: %s (by GPU UUID)\n", strings.Join(holds, ", "))
	fmt.Fprintf(out, "  raild    pid %d, socket %s\n", node.Raild.PID(), node.Raild.Socket)
	fmt.Fprintf(out, "  CNI      conflist rail-demo (1.1.0): ptp + host-local %s (eth0) → rail, mode move\n", ptpSubnet)
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}
