// Command fake-dra-nic-driver publishes, for a fake machine (a
// pkg/topology/fakesys folder), the node's ResourceSlice the way DRANet
// publishes it (integration/dradriver), so raild's DRA NIC completion can
// be exercised on a rig without DRANet:
//
//	fake-dra-nic-driver --root DIR --node NAME [--kubeconfig FILE] [--addr mlx5_2=10.56.0.5/24 ...]
//	                    [--kubelet-dir DIR] [--gpus]
//
// With --gpus it stands in for NVIDIA's GPU DRA driver instead: the node's
// GPUs as gpu.nvidia.com devices with pcieRoot and numaNode
// (dradriver.GPUSlice), for claims that align a Rail NIC with a GPU.
//
// Without --kubelet-dir it publishes once (creating or replacing the
// slice) and exits: a PodResources stand-in then reports the claims
// (daemon/podinfo/podinfotest, integration/cmd/fake-kubelet). With it, it
// also serves the kubelet's DRA plugin API (registered under
// DIR/plugins_registry, socket under DIR/plugins/dra.net) until SIGTERM, so
// a real kubelet prepares the claims and reports them; preparing names the
// allocated devices and moves nothing, injects nothing.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/integration/dradriver"
	"github.com/railcni/rail/pkg/topology"
)

// addrFlags collects --addr RDMADEVICE=ADDRESS/PREFIX, repeatable.
type addrFlags map[string][]string

func (a addrFlags) String() string { return fmt.Sprint(map[string][]string(a)) }

func (a addrFlags) Set(v string) error {
	dev, addr, ok := strings.Cut(v, "=")
	if !ok || dev == "" || addr == "" {
		return fmt.Errorf("--addr %q: want RDMADEVICE=ADDRESS/PREFIX, e.g. mlx5_2=10.56.0.5/24", v)
	}
	a[dev] = append(a[dev], addr)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fake-dra-nic-driver:", err)
		os.Exit(1)
	}
}

func run() error {
	root := flag.String("root", "", "the fake machine's folder (as raild's --root)")
	node := flag.String("node", "", "the node name (the slice's spec.nodeName and pool)")
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig (empty: in-cluster)")
	kubeletDir := flag.String("kubelet-dir", "", "the kubelet's root dir: serve the DRA plugin API there until SIGTERM")
	gpus := flag.Bool("gpus", false, "publish the machine's GPUs as NVIDIA's DRA driver would (gpu.nvidia.com), not its NICs")
	addrs := addrFlags{}
	flag.Var(addrs, "addr", "RDMADEVICE=ADDRESS/PREFIX published as dra.net/ipv4 (repeatable)")
	flag.Parse()
	if *root == "" || *node == "" {
		return errors.New("--root and --node are required")
	}
	m, err := topology.Discover(*root)
	if err != nil {
		return fmt.Errorf("read the machine under %s: %w", *root, err)
	}
	cfg, err := kubeclient.Config(*kubeconfig)
	if err != nil {
		return err
	}
	clients, err := kubeclient.New(cfg, "fake-dra-nic-driver")
	if err != nil {
		return err
	}
	slice, driver := dradriver.Slice(m, dradriver.Options{Node: *node, Addrs: addrs}), dradriver.Driver
	if *gpus {
		slice, driver = dradriver.GPUSlice(m, *node), dradriver.GPUDriver
	}
	publish, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := dradriver.Publish(publish, clients.Kube, slice); err != nil {
		return err
	}
	fmt.Printf("published ResourceSlice %s: %d devices of driver %s for node %s\n", slice.Name, len(slice.Spec.Devices), driver, *node)
	if *kubeletDir == "" {
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	registry, data := filepath.Join(*kubeletDir, "plugins_registry"), filepath.Join(*kubeletDir, "plugins", driver)
	for _, dir := range []string{registry, data} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("the kubelet's plugin dirs: %w", err)
		}
	}
	helper, err := kubeletplugin.Start(ctx, plugin{log: log, driver: driver},
		kubeletplugin.DriverName(driver), kubeletplugin.NodeName(*node), kubeletplugin.KubeClient(clients.Kube),
		kubeletplugin.RegistrarDirectoryPath(registry), kubeletplugin.PluginDataDirectoryPath(data))
	if err != nil {
		return fmt.Errorf("serve the kubelet DRA plugin API: %w", err)
	}
	log.Info("serving the kubelet DRA plugin API", "driver", driver, "kubeletDir", *kubeletDir)
	<-ctx.Done()
	helper.Stop()
	return nil
}
