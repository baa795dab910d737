// Command fake-dra-nic-driver publishes, for a fake machine (a
// pkg/topology/fakesys folder), the node's ResourceSlice the way DRANet
// publishes it (integration/dradriver), so raild's DRA NIC completion can
// be exercised on a rig without DRANet:
//
//	fake-dra-nic-driver --root DIR --node NAME [--kubeconfig FILE] [--addr mlx5_2=10.56.0.5/24 ...]
//
// It publishes once (creating or replacing the slice) and exits; it moves
// nothing and serves no kubelet plugin API: a rig's PodResources stand-in
// reports the claims (daemon/podinfo/podinfotest, integration/cmd/fake-kubelet).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	slice := dradriver.Slice(m, dradriver.Options{Node: *node, Addrs: addrs})
	if err := dradriver.Publish(ctx, clients.Kube, slice); err != nil {
		return err
	}
	fmt.Printf("published ResourceSlice %s: %d devices of driver %s for node %s\n", slice.Name, len(slice.Spec.Devices), dradriver.Driver, *node)
	return nil
}
